/**
 * Fixed value pools shared by the families, the task generator and the corpus.
 *
 * A tiny model needs a closed, modest vocabulary (docs/design.md B "Tokens"): every file name, contact, symbol and
 * message text comes from here, so the whole world spells itself with a few hundred word pieces.
 */

export const FOLDERS = ['docs', 'photos', 'music', 'projects', 'reports', 'notes', 'backup', 'archive', 'work',
  'school', 'games', 'travel'];

/** Extra folder names that are never in an initial state (targets of mkdir). */
export const NEW_FOLDERS = ['drafts', 'ideas', 'old', 'shared', 'temp', 'videos', 'recipes', 'letters'];

export const FILE_STEMS = ['notes', 'report', 'todo', 'plan', 'data', 'draft', 'budget', 'ideas', 'list', 'letter',
  'summary', 'log', 'story', 'resume', 'photo', 'song'];
export const FILE_EXTS = ['txt', 'md', 'csv'];

export const FILE_TEXTS = [
  'buy milk and bread',
  'meeting at noon',
  'call the bank',
  'finish the draft',
  'pay the rent',
  'total is fifty',
  'first chapter done',
  'send the invoice',
  'book the hotel',
  'check the numbers',
];

export const CONTACTS = ['alice', 'bob', 'carol', 'dave', 'emma', 'frank', 'grace', 'henry', 'ivy', 'jack', 'kate',
  'leo', 'mia', 'nina', 'oscar', 'paul'];

export const MESSAGE_TEXTS = [
  'see you at noon',
  'the meeting moved to friday',
  'call me back',
  'lunch is ready',
  'happy birthday',
  'the report is done',
  'running late today',
  'thanks for the help',
  'where are the keys',
  'dinner at seven',
  'the bus is late',
  'good luck today',
];

export const SYMBOLS = ['AAPL', 'MSFT', 'GOOG', 'TSLA', 'AMZN', 'NVDA', 'META', 'NFLX'];

export const REMINDER_TITLES = ['call mom', 'pay rent', 'buy milk', 'team meeting', 'dentist visit', 'water plants',
  'gym class', 'book flight', 'return books', 'walk the dog'];

export const TIMES = ['07:30', '08:00', '09:15', '10:00', '11:45', '12:30', '14:00', '15:20', '17:00', '18:30',
  '20:00', '21:15'];
