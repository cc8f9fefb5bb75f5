/**
 * The contract between the renderer and the controller: the payloads the renderer writes (the
 * controller's env, each StatefulSet's settings annotation, the monitoring Job's env), with one
 * encoder the renderer writes each with and one parser the controller reads it back with.
 */
export * from './changefeeds';
export * from './cluster-info';
export * from './monitoring';
export * from './resource-groups';
export * from './settings';
export * from './sql-accounts';
