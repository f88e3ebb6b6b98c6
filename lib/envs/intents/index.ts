/** Intents per family name (see common.ts for what an intent is). */
import { Intent } from './common';
import { FS_INTENTS } from './filesystem';
import { MSG_INTENTS } from './messaging';
import { TRADE_INTENTS } from './trading';
import { CAR_INTENTS } from './vehicle';
import { REM_INTENTS } from './reminders';

export const INTENTS: { [family: string]: Intent<never>[] } = {
  file_system: FS_INTENTS as Intent<never>[],
  messaging: MSG_INTENTS as Intent<never>[],
  trading: TRADE_INTENTS as Intent<never>[],
  vehicle: CAR_INTENTS as Intent<never>[],
  reminders: REM_INTENTS as Intent<never>[],
};

export * from './common';
