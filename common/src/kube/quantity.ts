/**
 * Kubernetes resource quantities (`500m`, `1.5Gi`, `2e3`), held exactly as `digits * 10^exponent`:
 * the scheduler validation compares a container's requests with its limits as kube-apiserver
 * does, and the sandbox's CEL quantity library (`quantity('1.5Gi')`, `isQuantity`, `compareTo`,
 * `add`, `asInteger`...) computes with them.
 */

const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;
const DECIMAL_SUFFIX: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIX: Record<string, bigint> = { Ki: 1n << 10n, Mi: 1n << 20n, Gi: 1n << 30n, Ti: 1n << 40n, Pi: 1n << 50n, Ei: 1n << 60n };

/** Whether `suffix` is one a Kubernetes quantity may end with: a decimal or binary SI suffix, or a decimal exponent. */
export function isQuantitySuffix(suffix: string): boolean {
  return Object.hasOwn(DECIMAL_SUFFIX, suffix) || Object.hasOwn(BINARY_SUFFIX, suffix) || /^[eE][+-]?\d+$/.test(suffix);
}

export class Quantity {
  constructor(
    /** value = digits * 10^exponent */
    readonly digits: bigint,
    readonly exponent: number,
    readonly text: string,
  ) {}

  compare(other: Quantity): number {
    const e = Math.min(this.exponent, other.exponent);
    const a = this.digits * 10n ** BigInt(this.exponent - e);
    const b = other.digits * 10n ** BigInt(other.exponent - e);
    return a < b ? -1 : a > b ? 1 : 0;
  }

  add(other: Quantity, sign: 1n | -1n): Quantity {
    const e = Math.min(this.exponent, other.exponent);
    const digits = this.digits * 10n ** BigInt(this.exponent - e) + sign * other.digits * 10n ** BigInt(other.exponent - e);
    return new Quantity(digits, e, formatQuantity(digits, e));
  }

  isInteger(): boolean {
    if (this.exponent >= 0) return true;
    return this.digits % 10n ** BigInt(-this.exponent) === 0n;
  }

  /** The integer value, or undefined when it is fractional. */
  asInteger(): bigint | undefined {
    if (this.exponent >= 0) return this.digits * 10n ** BigInt(this.exponent);
    const div = 10n ** BigInt(-this.exponent);
    return this.digits % div === 0n ? this.digits / div : undefined;
  }

  asApproximateFloat(): number {
    return Number(this.digits) * 10 ** this.exponent;
  }

  sign(): bigint {
    return this.digits > 0n ? 1n : this.digits < 0n ? -1n : 0n;
  }
}

function formatQuantity(digits: bigint, exponent: number): string {
  if (exponent >= 0) return (digits * 10n ** BigInt(exponent)).toString();
  const neg = digits < 0n;
  const abs = (neg ? -digits : digits).toString().padStart(-exponent + 1, '0');
  const cut = abs.length + exponent;
  const frac = abs.slice(cut).replace(/0+$/, '');
  return `${neg ? '-' : ''}${abs.slice(0, cut)}${frac ? `.${frac}` : ''}`;
}

export function parseQuantity(text: string): Quantity | undefined {
  const m = QUANTITY.exec(text);
  if (!m) return undefined;
  const [, sign = '', number = '0', suffix = ''] = m;
  const [whole = '', frac = ''] = number.split('.');
  let digits = BigInt(`${whole}${frac}` || '0');
  let exponent = -frac.length;
  const binary = BINARY_SUFFIX[suffix];
  if (binary !== undefined) {
    digits *= binary;
  } else if (suffix.startsWith('e') || suffix.startsWith('E')) {
    exponent += Number(suffix.slice(1));
  } else {
    exponent += DECIMAL_SUFFIX[suffix] ?? 0;
  }
  if (Math.abs(exponent) > 1000) return undefined;
  return new Quantity(sign === '-' ? -digits : digits, exponent, text);
}

/** A resource whose request is above its limit (the texts as written). */
export interface ResourceAboveLimit<R extends string = string> {
  resource: R;
  request: string;
  limit: string;
}

/**
 * The resources among `resources` whose request is above its limit, as kube-apiserver refuses
 * them in a Pod. A resource without both, or with a value that is not a quantity, is not compared.
 */
export function resourcesAboveLimits<R extends string>(requests: Readonly<Partial<Record<R, unknown>>> | undefined, limits: Readonly<Partial<Record<R, unknown>>> | undefined, resources: readonly R[]): ResourceAboveLimit<R>[] {
  const above: ResourceAboveLimit<R>[] = [];
  for (const resource of resources) {
    const request = requests?.[resource];
    const limit = limits?.[resource];
    if (typeof request !== 'string' || typeof limit !== 'string') continue;
    const requested = parseQuantity(request);
    const limited = parseQuantity(limit);
    if (requested && limited && requested.compare(limited) > 0) above.push({ resource, request, limit });
  }
  return above;
}
