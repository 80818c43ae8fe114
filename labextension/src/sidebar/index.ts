/** The Code Mode sidebar of codemode-kernel's JupyterLab extension. */
export { CodeModeSidebar, type ICodeModeSidebarOptions, type StatusKind } from './sidebar';
export {
  CodeModeApiError,
  CodeModeClient,
  type IArtifactData,
  type IArtifactInfo,
  type IExecutorInfo,
  type IExecutorNode,
  type IKernelState,
  type IRun,
  type IRunSummary,
  type IServerInfo,
  type IToolInfo
} from './api';
export { codeModeIcon } from './icon';
