import { readFileSync, readdirSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces; fields resume after its closing parenthesis.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** User + system CPU of one process so far, in ms (with `children`, also that of its reaped children). */
export function processCpuMs(pid: number, children = false): number {
  const fields = statFields(pid);
  if (!fields) return 0;
  // After the name: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
  const ticks = Number(fields[11]) + Number(fields[12]) + (children ? Number(fields[13]) + Number(fields[14]) : 0);
  return (ticks / TICKS_PER_SECOND) * 1000;
}

/**
 * All CPU a PostgreSQL cluster has used so far, in ms: the postmaster, its live children
 * (backends, WAL writer, checkpointer…) and, through the postmaster's cutime/cstime, the
 * backends that already exited.
 */
export function clusterCpuMs(postmasterPid: number): number {
  let total = processCpuMs(postmasterPid, true);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields && Number(fields[1]) === postmasterPid) total += processCpuMs(Number(entry));
  }
  return total;
}

/** The load generator's own CPU (this process), in ms. */
export function selfCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

export interface CpuSplit {
  /** CPU µs per answered request, by who spent it. */
  serverUs: number;
  postgresUs: number | null;
  loadGeneratorUs: number;
}

/** Snapshot now; call the result after the run to get µs per request by component. */
export function measureCpu(serverPid: number, postmasterPid: number | undefined): (requests: number) => CpuSplit {
  const before = { server: processCpuMs(serverPid), postgres: postmasterPid ? clusterCpuMs(postmasterPid) : 0, self: selfCpuMs() };
  return (requests) => {
    const per = (ms: number) => Math.round((ms * 1000) / Math.max(1, requests));
    return {
      serverUs: per(processCpuMs(serverPid) - before.server),
      postgresUs: postmasterPid ? per(clusterCpuMs(postmasterPid) - before.postgres) : null,
      loadGeneratorUs: per(selfCpuMs() - before.self),
    };
  };
}
