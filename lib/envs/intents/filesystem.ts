/** Requests for the file system family (lib/envs/families/filesystem.ts). */
import { FsState, Dir, isDir } from '../families/filesystem';
import { FILE_EXTS, FILE_STEMS, NEW_FOLDERS } from '../pools';
import { Intent, IntentCtx, call, say } from './common';

function here(s: FsState): Dir {
  let d = s.root;
  for (const p of s.cwd) d = d[p] as Dir;
  return d;
}
const folders = (d: Dir): string[] => Object.keys(d).filter((k) => isDir(d[k])).sort();
const files = (d: Dir): string[] => Object.keys(d).filter((k) => typeof d[k] === 'string').sort();

function newFileName(c: IntentCtx<FsState>, d: Dir): string | null {
  for (let i = 0; i < 10; i++) {
    const n = `${c.rng.pick(FILE_STEMS)}.${c.rng.pick(FILE_EXTS)}`;
    if (d[n] === undefined) return n;
  }
  return null;
}
function newFolderName(c: IntentCtx<FsState>, d: Dir): string | null {
  const free = NEW_FOLDERS.filter((n) => d[n] === undefined);
  return free.length ? c.rng.pick(free) : null;
}

export const FS_INTENTS: Intent<FsState>[] = [
  {
    name: 'cd_ls',
    long: true,
    make(c) {
      const d = here(c.state);
      const fs = folders(d);
      if (!fs.length) return null;
      // long_context: the folder with the most items gives the longest `ls` observation.
      const f = c.long ? fs.slice().sort((a, b) => Object.keys(d[b] as Dir).length -
        Object.keys(d[a] as Dir).length)[0] : c.rng.pick(fs);
      return {
        calls: [call('cd', { folder: f }), call('ls')],
        text: say(c.rng, ['go into the {f} folder and show me what is inside.', 'open {f} and list its files.',
          'what is in the {f} folder? Go there and list it.', 'move into {f}, then list everything there.',
          'switch to {f} and tell me which files it has.'], { f }),
        miss: {
          text: say(c.rng, ['go into a folder and list what is inside.', 'open a folder for me and list its files.',
            'list the files of one of my folders.']),
          supply: say(c.rng, ['the folder is {f}.', 'I mean the {f} folder.', 'use {f}.'], { f }),
        },
      };
    },
  },
  {
    name: 'mkdir',
    make(c) {
      const n = newFolderName(c, here(c.state));
      if (!n) return null;
      return {
        calls: [call('mkdir', { folder: n })],
        text: say(c.rng, ['make a new folder named {n}.', 'create a folder called {n}.', 'I need a new folder, {n}.'],
          { n }),
        miss: { text: say(c.rng, ['make a new folder for me.', 'create a new folder here.']),
          supply: say(c.rng, ['call it {n}.', 'the folder name is {n}.'], { n }) },
      };
    },
  },
  {
    name: 'cat',
    make(c) {
      const fl = files(here(c.state));
      if (!fl.length) return null;
      const n = c.rng.pick(fl);
      return {
        calls: [call('cat', { file_name: n })],
        text: say(c.rng, ['show me what {n} says.', 'read {n} for me.', 'what is written in {n}?'], { n }),
        miss: { text: say(c.rng, ['read a file for me.', 'show me what one of my files says.']),
          supply: say(c.rng, ['the file is {n}.', 'I mean {n}.'], { n }) },
      };
    },
  },
  {
    name: 'cd_cat',
    make(c) {
      const d = here(c.state);
      const fs = folders(d).filter((f) => files(d[f] as Dir).length > 0);
      if (!fs.length) return null;
      const f = c.rng.pick(fs);
      const n = c.rng.pick(files(d[f] as Dir));
      return {
        calls: [call('cd', { folder: f }), call('cat', { file_name: n })],
        text: say(c.rng, ['open {n} in the {f} folder.', 'go to {f} and read {n}.', 'what does {n} in {f} say?'],
          { f, n }),
      };
    },
  },
  {
    name: 'rename',
    make(c) {
      const d = here(c.state);
      const fl = files(d);
      const m = newFileName(c, d);
      if (!fl.length || !m) return null;
      const n = c.rng.pick(fl);
      return {
        calls: [call('mv', { source: n, destination: m })],
        text: say(c.rng, ['rename {n} to {m}.', 'change the name of {n} to {m}.', 'give {n} the new name {m}.'],
          { n, m }),
        miss: { text: say(c.rng, ['rename {n} for me.', 'give {n} a new name.'], { n }),
          supply: say(c.rng, ['the new name is {m}.', 'call it {m}.'], { m }) },
      };
    },
  },
  {
    name: 'move_into',
    make(c) {
      const d = here(c.state);
      const fl = files(d);
      const fs = folders(d);
      if (!fl.length || !fs.length) return null;
      const n = c.rng.pick(fl);
      const f = c.rng.pick(fs);
      if ((d[f] as Dir)[n] !== undefined) return null;
      return {
        calls: [call('mv', { source: n, destination: f })],
        text: say(c.rng, ['move {n} into the {f} folder.', 'put {n} in {f}.', 'I want {n} inside {f}.'], { n, f }),
        miss: { text: say(c.rng, ['move {n} into another folder.', 'put {n} somewhere else.'], { n }),
          supply: say(c.rng, ['put it in {f}.', 'the folder is {f}.'], { f }) },
      };
    },
  },
  {
    name: 'mkdir_move',
    make(c) {
      const d = here(c.state);
      const fl = files(d);
      const n = newFolderName(c, d);
      if (!fl.length || !n) return null;
      const f = c.rng.pick(fl);
      return {
        calls: [call('mkdir', { folder: n }), call('mv', { source: f, destination: n })],
        text: say(c.rng, ['make a folder called {n} and move {f} into it.',
          'create a new folder {n}, then put {f} there.'], { n, f }),
      };
    },
  },
  {
    name: 'rm',
    make(c) {
      const fl = files(here(c.state));
      if (!fl.length) return null;
      const n = c.rng.pick(fl);
      return {
        calls: [call('rm', { file_name: n })],
        text: say(c.rng, ['delete {n}.', 'remove the file {n}.', 'get rid of {n}, please.'], { n }),
        miss: { text: say(c.rng, ['delete a file for me.', 'remove one of my files.']),
          supply: say(c.rng, ['it is {n}.', 'the file is {n}.'], { n }) },
      };
    },
  },
  {
    name: 'up',
    make(c) {
      if (!c.state.cwd.length) return null;
      return { calls: [call('cd', { folder: '..' })], text: say(c.rng,
        ['go back to the parent folder.', 'go up one folder.', 'leave this folder and go back up.']) };
    },
  },
  {
    name: 'ls',
    make(c) {
      return { calls: [call('ls')], text: say(c.rng, ['what is in the current folder?', 'list the files here.',
        'show me everything in this folder.']) };
    },
  },
];
