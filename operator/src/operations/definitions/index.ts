/** Every operation definition the operator executes; any other definition name is evicted. */
import type { OperationDefinition } from '../execution';
import { createSchedulerDefinition } from './create-scheduler';
import { deleteSchedulerDefinition } from './delete-scheduler';
import { newVersionDefinition } from './new-version';
import { addRoomsDefinition, removeRoomsDefinition } from './rooms';
import { switchVersionDefinition } from './switch-version';

export const DEFINITIONS: readonly OperationDefinition[] = [
  createSchedulerDefinition,
  newVersionDefinition,
  switchVersionDefinition,
  addRoomsDefinition,
  removeRoomsDefinition,
  deleteSchedulerDefinition,
];
