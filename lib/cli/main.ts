/**
 * `toolrl`: the command line of toolrl-collapse.
 *
 *   toolrl data                       regenerate the committed splits under data/
 *   toolrl eval   --checkpoint DIR | --policy teacher  [--split id|format_ood|content_ood] [--json]
 *   toolrl bench  [--json]            throughput of the default model on the active backend
 *   toolrl run    --config NAME [--preset P] [--seed N] [--set k=v ...] [--out DIR]
 *   toolrl reproduce [--preset smoke|quick|full] [--out DIR]
 *
 * Errors go to stderr in one style, one line, `toolrl <command>: error: <what>`, and name what was wrong: bad
 * arguments, configs or input files exit 2 (before any backend starts), each other kind of refusal has its own
 * code (lib/util/errors.ts EXIT: 3 folder in use, 4 folder holds results, 5 not a run folder, 6 nothing to
 * resume), failures while working exit 1.
 */
import { commandHelp, parseArgs } from './args';
import { exitCodeOf } from '../util/errors';
import { COMMANDS } from './commands';

function usage(): string {
  const lines = ['usage: toolrl <command> [options]', '', 'commands:'];
  for (const c of COMMANDS) lines.push(`  ${c.spec.name.padEnd(11)}${c.spec.summary}`);
  lines.push('', 'toolrl <command> --help shows the options of a command.');
  return lines.join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage() + '\n');
    return name ? 0 : 2;
  }
  const cmd = COMMANDS.find((c) => c.spec.name === name);
  if (!cmd) {
    process.stderr.write(`toolrl: unknown command "${name}"\n\n${usage()}\n`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(commandHelp(cmd.spec) + '\n');
    return 0;
  }
  try {
    await cmd.run(parseArgs(cmd.spec, rest));
    return 0;
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    process.stderr.write(`toolrl ${name}: error: ${msg.replace(/\s*\n\s*/g, ' ')}\n`); // one line, whatever the message
    if (process.env.TOOLRL_DEBUG && err instanceof Error && err.stack) process.stderr.write(err.stack + '\n');
    return exitCodeOf(err);
  }
}

// A reader that closes the pipe early (`toolrl run --list | head`) is not an error: stop quietly, as `ls | head` does.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
