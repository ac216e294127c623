/**
 * Child process: real gRPC forward receivers (`startForwardReceiver`), the external services a
 * scheduler forwards to. Argument: how many, or `{count, silent}` where the first `silent` of them
 * never answer a call (a hung receiver). Ready payload: their addresses. Call `received`: calls
 * received per receiver since start (the receivers' logs are trimmed as they grow).
 */
import { NO_REPLY, startForwardReceiver, type ForwardReceiver } from '../../common/src/forwarding/forward-receiver';
import { serveParent, childArg } from '../support/child-rpc';

serveParent<{ addresses: string[] }>(async () => {
  const arg = childArg() as number | { count: number; silent: number };
  const { count, silent } = typeof arg === 'number' ? { count: arg, silent: 0 } : arg;
  const receivers: ForwardReceiver[] = [];
  for (let i = 0; i < count; i++) receivers.push(await startForwardReceiver(i < silent ? { reply: () => NO_REPLY } : {}));
  const totals = receivers.map(() => 0);
  const trim = () => {
    receivers.forEach((r, i) => {
      totals[i] = (totals[i] ?? 0) + r.received.length;
      r.received.length = 0;
    });
  };
  const timer = setInterval(trim, 200);
  return {
    payload: { addresses: receivers.map((r) => r.address) },
    handlers: {
      received: () => {
        trim();
        return [...totals];
      },
    },
    stop: async () => {
      clearInterval(timer);
      await Promise.all(receivers.map((r) => r.stop()));
    },
  };
});
