/**
 * The TypeScript twin of every CEL rule (`x-kubernetes-validations`) in crds/.
 *
 * Each entry repeats the CEL text verbatim next to the TypeScript that implements it, with the
 * same message and fieldPath, so the gateway rejects exactly what the API server rejects.
 * cel-rules.test.ts fails when a rule in the YAML has no twin here (matched by location, rule and
 * message) or a twin has no rule in the YAML.
 *
 * `scope` names the schema `at` is relative to. `SchedulerSpec` is Scheduler `spec` and, identically,
 * SchedulerVersion `spec.definition`. `at` uses `.` between properties and `[]` for array items.
 */
export type CelScope = 'Scheduler' | 'SchedulerSpec' | 'SchedulerVersion' | 'Operation';

export interface CelTwin {
  scope: CelScope;
  /** Where the rule sits in the schema, relative to the scope ('' is the scope's root). */
  at: readonly string[];
  /** The CEL expression, verbatim from the YAML. */
  rule: string;
  message: string;
  /** The CEL fieldPath, relative to the node that carries the rule. */
  fieldPath?: string;
  /** True for transition rules (they use oldSelf and run only on update). */
  transition?: boolean;
  /** Whether the rule holds. Throwing NotApplicable means a field the rule reads is missing or of the wrong type (the schema reports that). */
  holds: (self: unknown, oldSelf?: unknown) => boolean;
}

/** Thrown by a twin when the value does not have the shape the rule reads. */
export class NotApplicable extends Error {
  constructor() {
    super('rule not applicable');
    this.name = 'NotApplicable';
  }
}

type Obj = Record<string, unknown>;

function obj(value: unknown): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new NotApplicable();
  return value as Obj;
}

function list(value: unknown): unknown[] {
  if (!Array.isArray(value)) throw new NotApplicable();
  return value;
}

function str(value: unknown): string {
  if (typeof value !== 'string') throw new NotApplicable();
  return value;
}

function num(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new NotApplicable();
  return value;
}

/** CEL `has(o.field)`. */
function has(value: unknown, field: string): boolean {
  return obj(value)[field] !== undefined;
}

function isInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value);
}

/** CEL `==` on JSON values (deep, key-order insensitive). */
export function celEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => celEquals(x, b[i]));
  }
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const ka = Object.keys(a).filter((k) => (a as Obj)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Obj)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => celEquals((a as Obj)[k], (b as Obj)[k]));
}

function ports(roomSpecOwner: unknown): Obj[] {
  return list(obj(obj(roomSpecOwner).spec).containers).flatMap((c) => (has(c, 'ports') ? list(obj(c).ports).map(obj) : []));
}

const RFC1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export const celTwins: readonly CelTwin[] = [
  // ---- Scheduler (root) ----
  {
    scope: 'Scheduler',
    at: [''],
    rule: "self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 63",
    message: "name must be an RFC 1123 label: at most 63 lower-case letters, digits or '-', starting and ending with a letter or digit",
    holds: (self) => {
      const name = str(obj(obj(self).metadata).name);
      return RFC1123_LABEL.test(name) && name.length <= 63;
    },
  },
  {
    scope: 'Scheduler',
    at: [''],
    rule: "self.metadata.name != 'info'",
    message: "name must not be 'info' (reserved by GET /schedulers/info)",
    holds: (self) => str(obj(obj(self).metadata).name) !== 'info',
  },
  // ---- SchedulerSpec (Scheduler.spec, SchedulerVersion.spec.definition) ----
  {
    scope: 'SchedulerSpec',
    at: [''],
    rule: '!has(self.portRange) || self.spec.containers.all(c, !has(c.ports) || c.ports.all(p, !has(p.hostPortRange)))',
    message: 'portRange and hostPortRange are mutually exclusive: no container port may set hostPortRange when portRange is set',
    fieldPath: '.portRange',
    holds: (self) => !has(self, 'portRange') || ports(self).every((p) => !has(p, 'hostPortRange')),
  },
  {
    scope: 'SchedulerSpec',
    at: [''],
    rule: 'has(self.portRange) || self.spec.containers.all(c, !has(c.ports) || c.ports.all(p, has(p.hostPortRange)))',
    message: 'every container port must set hostPortRange when portRange is not set',
    fieldPath: '.spec.containers',
    holds: (self) => has(self, 'portRange') || ports(self).every((p) => has(p, 'hostPortRange')),
  },
  {
    scope: 'SchedulerSpec',
    at: ['maxSurge'],
    rule: "type(self) == int ? self >= 1 : self.matches('^([1-9][0-9]*|[0-9]+%)$')",
    message: 'maxSurge must be an integer >= 1 or a percentage such as "10%"',
    holds: (self) => (isInt(self) ? self >= 1 : /^([1-9][0-9]*|[0-9]+%)$/.test(str(self))),
  },
  {
    scope: 'SchedulerSpec',
    at: ['portRange', 'spec.containers[].ports[].hostPortRange'],
    rule: 'self.start < self.end',
    message: 'start must be less than end',
    fieldPath: '.start',
    holds: (self) => num(obj(self).start) < num(obj(self).end),
  },
  {
    scope: 'SchedulerSpec',
    at: ['autoscaling'],
    rule: 'self.max < 0 || self.min <= self.max',
    message: 'min must be less than or equal to max',
    fieldPath: '.min',
    holds: (self) => num(obj(self).max) < 0 || num(obj(self).min) <= num(obj(self).max),
  },
  {
    scope: 'SchedulerSpec',
    at: ['autoscaling.policy'],
    rule: "self.type != 'roomOccupancy' || (has(self.parameters) && has(self.parameters.roomOccupancy))",
    message: 'parameters.roomOccupancy is required when the policy type is roomOccupancy',
    fieldPath: '.parameters',
    holds: (self) => obj(self).type !== 'roomOccupancy' || (has(self, 'parameters') && has(obj(self).parameters, 'roomOccupancy')),
  },
  {
    scope: 'SchedulerSpec',
    at: ['autoscaling.policy'],
    rule: "self.type != 'fixedBuffer' || (has(self.parameters) && has(self.parameters.fixedBuffer))",
    message: 'parameters.fixedBuffer is required when the policy type is fixedBuffer',
    fieldPath: '.parameters',
    holds: (self) => obj(self).type !== 'fixedBuffer' || (has(self, 'parameters') && has(obj(self).parameters, 'fixedBuffer')),
  },
  {
    scope: 'SchedulerSpec',
    at: ['spec.terminationGracePeriod'],
    rule: "self.matches('[1-9]')",
    message: 'terminationGracePeriod must be greater than 0',
    holds: (self) => /[1-9]/.test(str(self)),
  },
  {
    scope: 'SchedulerSpec',
    at: ['spec.containers'],
    rule: 'self.all(c, self.exists_one(d, d.name == c.name))',
    message: 'container names must be unique',
    holds: (self) => {
      const names = list(self).map((c) => obj(c).name);
      return names.every((n) => names.filter((m) => m === n).length === 1);
    },
  },
  {
    scope: 'SchedulerSpec',
    at: ['spec.containers[].environment[]'],
    rule: 'has(self.value) != has(self.valueFrom)',
    message: 'exactly one of value or valueFrom must be set',
    holds: (self) => has(self, 'value') !== has(self, 'valueFrom'),
  },
  {
    scope: 'SchedulerSpec',
    at: ['spec.containers[].environment[].valueFrom'],
    rule: 'has(self.fieldRef) != has(self.secretKeyRef)',
    message: 'exactly one of fieldRef or secretKeyRef must be set',
    holds: (self) => has(self, 'fieldRef') !== has(self, 'secretKeyRef'),
  },
  // ---- SchedulerVersion ----
  {
    scope: 'SchedulerVersion',
    at: [''],
    rule: "self.metadata.name == self.spec.scheduler + '-' + self.spec.version",
    message: 'name must be <spec.scheduler>-<spec.version>',
    holds: (self) => {
      const spec = obj(obj(self).spec);
      return str(obj(obj(self).metadata).name) === `${str(spec.scheduler)}-${str(spec.version)}`;
    },
  },
  {
    scope: 'SchedulerVersion',
    at: ['spec'],
    rule: 'self == oldSelf',
    message: 'a SchedulerVersion is immutable',
    transition: true,
    holds: (self, oldSelf) => celEquals(self, oldSelf),
  },
  // ---- Operation ----
  {
    scope: 'Operation',
    at: ['spec'],
    rule: 'self.schedulerName == oldSelf.schedulerName && self.definitionName == oldSelf.definitionName && self.enqueuedAt == oldSelf.enqueuedAt',
    message: 'schedulerName, definitionName and enqueuedAt are immutable',
    transition: true,
    holds: (self, oldSelf) =>
      (['schedulerName', 'definitionName', 'enqueuedAt'] as const).every((k) => celEquals(obj(self)[k], obj(oldSelf)[k])),
  },
];
