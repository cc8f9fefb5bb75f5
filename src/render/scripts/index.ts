export { pdStartScript } from './pd';
export { tikvStartScript } from './tikv';
export { tidbStartScript } from './tidb';
export {
  NO_FEATURE_FLAGS,
  pdContextErrors,
  tidbContextErrors,
  tikvContextErrors,
  type PdScriptContext,
  type RemotePdRef,
  type Scheme,
  type ScriptContext,
  type StartScriptV2FeatureFlags,
  type StartScriptVersion,
  type TidbScriptContext,
  type TikvScriptContext,
} from './context';
