// A leader-election candidate as its own process, for tests that kill or pause a leader.
// Env: KUBECONFIG_TEXT, IDENTITY, LEASE_NAMESPACE, LEASE_NAME, LEASE_MS, RENEW_MS, RETRY_MS.
// Prints one JSON line per transition; exits 1 when leadership is lost, 0 after SIGTERM.
import { LeaderElector } from '../src/leaderelection.js';
import { restFrom } from '#testing/kube-cluster';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const say = (event: string, fields: Record<string, unknown> = {}) =>
  process.stdout.write(`${JSON.stringify({ event, identity: env('IDENTITY'), ...fields })}\n`);

const elector = new LeaderElector({
  rest: restFrom(env('KUBECONFIG_TEXT')),
  namespace: env('LEASE_NAMESPACE'),
  name: env('LEASE_NAME'),
  identity: env('IDENTITY'),
  leaseDurationMs: Number(env('LEASE_MS')),
  renewDeadlineMs: Number(env('RENEW_MS')),
  retryPeriodMs: Number(env('RETRY_MS')),
  callbacks: {
    onStartedLeading: () => say('leading'),
    onStoppedLeading: (reason) => say('stopped', { reason }),
  },
});
process.on('SIGTERM', () => void elector.stop());
say('started');
const reason = await elector.run();
process.exit(reason === 'lost' ? 1 : 0);
