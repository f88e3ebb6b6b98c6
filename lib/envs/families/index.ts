/**
 * The registry of API families. Training families (TRAIN_FAMILIES) are the world the policy learns; the
 * held-out family (OOD_FAMILIES) only appears in content-OOD evaluation (docs/design.md A.7).
 */
import type { JsonValue, ToolSpec } from '../../format/types';
import { Rng } from '../../prng';
import { ApiFamily } from './base';
import { FileSystem, FS_TOOLS } from './filesystem';
import { Messaging, MSG_TOOLS } from './messaging';
import { Trading, TRADE_TOOLS } from './trading';
import { Vehicle, CAR_TOOLS } from './vehicle';
import { Reminders, REM_TOOLS } from './reminders';

export interface FamilyEntry {
  name: string;
  tools: readonly ToolSpec[];
  create(state: JsonValue): ApiFamily;
  randomState(rng: Rng, opts?: { long?: boolean }): JsonValue;
}

export const FAMILIES: { [name: string]: FamilyEntry } = {
  file_system: { name: 'file_system', tools: FS_TOOLS, create: (s) => new FileSystem(s as never),
    randomState: FileSystem.randomState },
  messaging: { name: 'messaging', tools: MSG_TOOLS, create: (s) => new Messaging(s as never),
    randomState: Messaging.randomState },
  trading: { name: 'trading', tools: TRADE_TOOLS, create: (s) => new Trading(s as never),
    randomState: Trading.randomState },
  vehicle: { name: 'vehicle', tools: CAR_TOOLS, create: (s) => new Vehicle(s as never),
    randomState: Vehicle.randomState },
  reminders: { name: 'reminders', tools: REM_TOOLS, create: (s) => new Reminders(s as never),
    randomState: Reminders.randomState },
};

export const TRAIN_FAMILIES: readonly string[] = ['file_system', 'messaging', 'trading', 'vehicle'];
export const OOD_FAMILIES: readonly string[] = ['reminders'];

/** A fresh instance of family `name` with a deep copy of `state`. Throws for an unknown family name. */
export function createFamily(name: string, state: JsonValue): ApiFamily {
  const f = FAMILIES[name];
  if (!f) throw new Error(`createFamily: unknown family ${JSON.stringify(name)} (known: ` +
    `${Object.keys(FAMILIES).join(', ')})`);
  return f.create(state);
}

export { ApiFamily } from './base';
