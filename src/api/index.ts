export type {
  ActorOptions,
  DeciderOptions,
  ApprovalDecision,
  CallbackCheck,
  CreateOptions,
  ReviseInput,
  AttentionDecision,
  ListFilter,
  Runtime,
  RuntimeLoopFault,
  RuntimeObserver,
  SubmitInput,
} from './runtime.ts';
export type { RuntimeEvent } from './runtime-event.ts';
export type {
  AttentionCallView,
  BatchView,
  BudgetsView,
  EarlierCallView,
  ListedField,
  RevisedByView,
  RevisionView,
  StepView,
  TaskListItem,
  TaskView,
  NetworkAccessView,
  TruncatedField,
} from './task-view.ts';
export { LISTED_FIELDS } from './task-view.ts';
export type { ApprovalInbox, ApprovalInboxItem } from './approval-inbox.ts';
export { corruptItem, corruptItemOfView } from './corrupt-item.ts';
export type { CorruptTaskItem } from './corrupt-item.ts';
export { keyView } from './key-view.ts';
export type { KeyView } from './key-view.ts';
