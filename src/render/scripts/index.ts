export { pdScriptContext, pdStartScript, pdContextErrors, type PdScriptContext } from './pd';
export { pdmsScriptContext, pdmsStartScript, pdmsContextErrors, type PdmsScriptContext } from './pdms';
export { tikvScriptContext, tikvStartScript, tikvContextErrors, type TikvScriptContext } from './tikv';
export { tidbScriptContext, tidbStartScript, tidbContextErrors, type TidbScriptContext } from './tidb';
export { tiflashScriptContext, tiflashInitScript, tiflashStartScript, tiflashContextErrors, type TiFlashScriptContext } from './tiflash';
export { ticdcScriptContext, ticdcStartScript, ticdcContextErrors, type TiCDCScriptContext } from './ticdc';
export { pumpScriptContext, pumpStartScript, pumpContextErrors, type PumpScriptContext } from './pump';
export { tiproxyScriptContext, tiproxyStartScript, tiproxyContextErrors, type TiProxyScriptContext } from './tiproxy';
export {
  baseContext,
  NO_FEATURE_FLAGS,
  type RemotePdRef,
  type Scheme,
  type ScriptContext,
  type StartScriptV2FeatureFlags,
  type StartScriptVersion,
} from './base-context';
