/**
 * A single-node Slurm cluster on localhost for test/slurm.test.ts (not itself a test file): munged,
 * slurmctld and slurmd from Debian's slurm-wlm and munge, every file they read or write under one temp
 * folder (a generated slurm.conf that SLURM_CONF names, a fresh munge key, private ports), so no system
 * configuration is read or changed. `startCluster` returns the cluster, or why it cannot run here (the
 * test skips with that reason); `stop` cancels what is left in the queue and ends the daemons.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ChildProcess, spawn, spawnSync } from 'child_process';
import { freePort } from './helpers';

export interface Cluster {
  dir: string;
  /** The environment every Slurm command and toolrl process of the test needs (SLURM_CONF). */
  env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

const BINARIES = ['munged', 'slurmctld', 'slurmd', 'sbatch', 'squeue', 'scancel', 'sinfo'];

function onPath(bin: string): boolean {
  return (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/sbin']).some((d) => d && fs.existsSync(path.join(d, bin)));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ok: () => boolean, ms: number, alive: () => boolean = () => true): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (!alive()) throw new Error(`${what}: the daemon exited`);
    if (Date.now() - t0 > ms) throw new Error(`${what}: not ready after ${ms / 1000} s`);
    await sleep(250);
  }
}

function tailOf(file: string, n = 15): string {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').slice(-n).join('\n') : `(no ${file})`;
}

/**
 * cgroup.conf variants slurmd is tried with, in order: Slurm's autodetection (cgroup v1 hosts and v2 under
 * systemd), then cgroup v2 without systemd (a v2 host without it). Job tracking itself uses no cgroups
 * (proctrack/linuxproc, task/none); slurmd still loads a cgroup plugin at start.
 */
const CGROUP_CONFS: (string | null)[] = [null, 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\n'];

export async function startCluster(): Promise<Cluster | string> {
  if (process.platform !== 'linux') return `Slurm test needs Linux (this is ${process.platform})`;
  const missing = BINARIES.filter((b) => !onPath(b));
  if (missing.length) return `slurm-wlm and munge are not installed (missing ${missing.join(', ')}): apt-get install -y slurm-wlm munge`;
  if (process.getuid?.() !== 0) return 'the local Slurm cluster runs its daemons as root (SlurmUser=root): run the test as root';

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolrl-slurm-'));
  fs.chmodSync(dir, 0o755); // munged wants its socket's folders searchable by everyone
  for (const d of ['munge', 'socket', 'state', 'spool', 'log']) fs.mkdirSync(path.join(dir, d));
  fs.chmodSync(path.join(dir, 'munge'), 0o700);
  fs.chmodSync(path.join(dir, 'socket'), 0o755);
  fs.writeFileSync(path.join(dir, 'munge', 'munge.key'), crypto.randomBytes(1024), { mode: 0o400 });
  const socket = path.join(dir, 'socket', 'munge.sock');
  const host = os.hostname().split('.')[0];
  const conf = path.join(dir, 'slurm.conf');
  const env = { ...process.env, SLURM_CONF: conf };
  const daemons: ChildProcess[] = [];
  const start = (bin: string, args: string[], log: string) => {
    const fd = fs.openSync(path.join(dir, 'log', log), 'a');
    const child = spawn(bin, args, { stdio: ['ignore', fd, fd], env });
    fs.closeSync(fd);
    child.on('error', () => undefined); // a failed start shows as an exit (exitCode / signalCode)
    daemons.push(child);
    return child;
  };
  const alive = (c: ChildProcess) => () => c.exitCode === null && c.signalCode === null;
  const ok = (cmd: string, args: string[], re: RegExp) => {
    const r = spawnSync(cmd, args, { encoding: 'utf8', env });
    return r.status === 0 && re.test(r.stdout);
  };

  let ctld: ChildProcess | null = null;
  const stop = async () => {
    if (ctld && alive(ctld)()) {
      // nothing of the test may outlive it: cancel what is queued or running, and wait for it to end
      spawnSync('scancel', ['--me'], { env });
      for (let i = 0; i < 60 && ok('squeue', ['-h', '--me', '-o', '%i'], /\d/); i++) await sleep(500);
    }
    for (const c of [...daemons].reverse()) {
      if (!alive(c)()) continue;
      c.kill('SIGTERM');
      for (let i = 0; i < 40 && alive(c)(); i++) await sleep(250);
      if (alive(c)()) c.kill('SIGKILL');
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };

  try {
    const munged = start('munged', ['-F', `--key-file=${path.join(dir, 'munge', 'munge.key')}`, `--socket=${socket}`,
      `--pid-file=${path.join(dir, 'munge', 'munged.pid')}`, `--log-file=${path.join(dir, 'log', 'munged.log')}`,
      `--seed-file=${path.join(dir, 'munge', 'munged.seed')}`], 'munged.out');
    await until('munged', () => fs.existsSync(socket), 15_000, alive(munged));
    const [ctldPort, dPort] = [await freePort(), await freePort()];
    fs.writeFileSync(path.join(dir, 'plugstack.conf'), ''); // no SPANK plugins (the system's plugstack.conf is not read)
    fs.writeFileSync(conf, [
      'ClusterName=toolrl', `SlurmctldHost=${host}(127.0.0.1)`, `SlurmctldPort=${ctldPort}`, `SlurmdPort=${dPort}`,
      'SlurmUser=root', 'SlurmdUser=root', 'AuthType=auth/munge', 'CredType=cred/munge', `AuthInfo=socket=${socket}`,
      `StateSaveLocation=${path.join(dir, 'state')}`, `SlurmdSpoolDir=${path.join(dir, 'spool')}`,
      `SlurmctldPidFile=${path.join(dir, 'slurmctld.pid')}`, `SlurmdPidFile=${path.join(dir, 'slurmd.pid')}`,
      `SlurmctldLogFile=${path.join(dir, 'log', 'slurmctld.log')}`, `SlurmdLogFile=${path.join(dir, 'log', 'slurmd.log')}`,
      `PlugStackConfig=${path.join(dir, 'plugstack.conf')}`,
      'ProctrackType=proctrack/linuxproc', 'TaskPlugin=task/none', 'JobAcctGatherType=jobacct_gather/none',
      'AccountingStorageType=accounting_storage/none', 'MpiDefault=none',
      // one core per task: as many tasks at once as the machine has cores (select/linear would give each a whole node)
      'SelectType=select/cons_tres', 'SelectTypeParameters=CR_Core',
      'SlurmdParameters=config_overrides', 'ReturnToService=2', 'KillWait=5', 'MinJobAge=600',
      `NodeName=${host} NodeAddr=127.0.0.1 CPUs=${os.cpus().length} State=UNKNOWN`,
      'PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP', '',
    ].join('\n'));
    ctld = start('slurmctld', ['-D', '-f', conf], 'slurmctld.out');
    await until('slurmctld', () => ok('scontrol', ['ping'], /UP/), 30_000, alive(ctld));
    const cgroupConf = path.join(dir, 'cgroup.conf');
    let why = '';
    for (const cg of CGROUP_CONFS) {
      if (cg === null) fs.rmSync(cgroupConf, { force: true });
      else fs.writeFileSync(cgroupConf, cg);
      const d = start('slurmd', ['-D', '-f', conf], 'slurmd.out');
      try {
        await until('slurmd', () => ok('sinfo', ['-h', '-N', '-o', '%t'], /^idle/m), 30_000, alive(d));
        return { dir, env, stop };
      } catch (e) {
        why = `${(e as Error).message} (cgroup.conf: ${cg === null ? 'none' : cg.trim().replace(/\n/g, ', ')}); slurmd log:\n` +
          tailOf(path.join(dir, 'log', 'slurmd.out'));
        if (alive(d)()) d.kill('SIGKILL');
      }
    }
    throw new Error(why);
  } catch (e) {
    const reason = `could not start a local Slurm cluster: ${(e as Error).message}`;
    await stop();
    return reason;
  }
}
