/**
 * The API server's warnings (the `Warning` header of an answer: a Pod Security `warn` label's
 * "would violate PodSecurity …", a deprecated API) about this process's requests. The request was
 * carried out; nobody read the warning (trial M, 2026-12-06: room namespaces carry the operator's
 * `pod-security.kubernetes.io/warn` label, and every room pod's warning went nowhere). Each is
 * logged at info, once an hour per request kind and text (digits aside: a pod's host port, a
 * room's number), at most MAX_KEPT kinds remembered.
 */
import type { Logger } from '../logger';
import { systemClock, type Clock } from '../runtime/clock';
import type { AccessRequest } from './api-access';
import { resourceOf } from './diagnosis';

const TELL_EVERY_MS = 60 * 60_000;
const MAX_KEPT = 500;

/** The texts of a `Warning` header (`299 - "text"`, several joined by commas). */
export function warningTexts(header: string): string[] {
  const texts: string[] = [];
  for (const m of header.matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)) texts.push((m[1] ?? '').replace(/\\(.)/g, '$1'));
  return texts;
}

/** What a warning asks of whoever runs Roomkeeper. */
function warningAdvice(text: string): string {
  if (/PodSecurity/.test(text)) {
    return 'nothing was refused: the namespace\'s pod-security.kubernetes.io/warn label (ROOMKEEPER_ROOM_NAMESPACE_PSA_WARN, restricted by default, for room namespaces) asks for this warning. '
      + 'Room pods use host ports (and run as their image\'s user unless ROOMKEEPER_ROOM_RUN_AS_NON_ROOT=true), which that level refuses: enforcing it (ROOMKEEPER_ROOM_NAMESPACE_PSA_ENFORCE) would refuse the rooms';
  }
  return 'nothing was refused; the warning says what to change';
}

export class ApiWarnings {
  /** Request kind and text -> when last logged (oldest first). */
  private readonly told = new Map<string, number>();

  constructor(private readonly opts: { logger: Logger; now?: Clock }) {}

  heard(request: AccessRequest, header: string): void {
    const now = (this.opts.now ?? systemClock)();
    const where = `${request.verb} ${resourceOf(request.path).display}`;
    for (const text of warningTexts(header)) {
      const key = `${where} ${text.replace(/\d+/g, '#')}`;
      const at = this.told.get(key);
      if (at !== undefined && now - at < TELL_EVERY_MS) continue;
      this.told.delete(key);
      this.told.set(key, now);
      if (this.told.size > MAX_KEPT) this.told.delete(this.told.keys().next().value as string);
      this.opts.logger.info('the Kubernetes API server warned about a request of this process, which it carried out', { request: where, warning: text, whatToDo: warningAdvice(text) });
    }
  }
}
