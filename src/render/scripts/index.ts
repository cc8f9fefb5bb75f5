export { pdStartScript } from './pd';
export { pdmsStartScript } from './pdms';
export { tikvStartScript } from './tikv';
export { tidbStartScript } from './tidb';
export { tiflashInitScript, tiflashStartScript, tiflashContextErrors, type TiFlashScriptContext } from './tiflash';
export { ticdcStartScript, ticdcContextErrors, type TiCDCScriptContext } from './ticdc';
export { pumpStartScript, pumpContextErrors, type PumpScriptContext } from './pump';
export { tiproxyStartScript, tiproxyContextErrors, type TiProxyScriptContext } from './tiproxy';
export {
  NO_FEATURE_FLAGS,
  pdContextErrors,
  pdmsContextErrors,
  tidbContextErrors,
  tikvContextErrors,
  type PdScriptContext,
  type PdmsScriptContext,
  type RemotePdRef,
  type Scheme,
  type ScriptContext,
  type StartScriptV2FeatureFlags,
  type StartScriptVersion,
  type TidbScriptContext,
  type TikvScriptContext,
} from './context';
