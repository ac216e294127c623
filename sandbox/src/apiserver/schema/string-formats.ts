/**
 * String `format` checks the real apiserver applies (kube-openapi's strfmt registry). Unknown
 * formats, and numeric formats such as int32/int64, are accepted as the real server does.
 */

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const HOSTNAME = /^[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*\.?$/;
const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const GO_DURATION = /^[-+]?((\d+(\.\d*)?|\.\d+)\s*(ns|us|µs|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?)\s*)+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const MAC = /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{2}[:-]){7}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$/;
const HEX_COLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const RGB_COLOR = /^rgb\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)$/;
const BSON_OBJECT_ID = /^[0-9a-fA-F]{24}$/;

function isIPv4(s: string): boolean {
  const parts = s.split('.');
  return parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255);
}

function isIPv6(s: string): boolean {
  if (!/^[0-9a-fA-F:.]+$/.test(s) || s.split('::').length > 2) return false;
  let groups = s.split(':');
  const last = groups[groups.length - 1] ?? '';
  let v4Groups = 0;
  if (last.includes('.')) {
    if (!isIPv4(last)) return false;
    groups = groups.slice(0, -1);
    v4Groups = 2;
  }
  const nonEmpty = groups.filter((g) => g !== '');
  if (!nonEmpty.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false;
  const total = nonEmpty.length + v4Groups;
  return s.includes('::') ? total < 8 : total === 8;
}

function isCIDR(s: string): boolean {
  const [ip, bits, extra] = s.split('/');
  if (ip === undefined || bits === undefined || extra !== undefined || !/^\d{1,3}$/.test(bits)) return false;
  if (isIPv4(ip)) return Number(bits) <= 32;
  return isIPv6(ip) && Number(bits) <= 128;
}

function isURI(s: string): boolean {
  try {
    new URL(s);
    return true;
  } catch {
    return false;
  }
}

export function isValidFormat(format: string, s: string): boolean {
  switch (format) {
    case 'uuid':
    case 'uuid3':
    case 'uuid4':
    case 'uuid5':
      return UUID.test(s);
    case 'hostname':
      return s.length <= 255 && HOSTNAME.test(s);
    case 'email':
      return EMAIL.test(s);
    case 'ipv4':
      return isIPv4(s);
    case 'ipv6':
      return isIPv6(s);
    case 'cidr':
      return isCIDR(s);
    case 'mac':
      return MAC.test(s);
    case 'uri':
      return isURI(s);
    case 'date':
      return DATE.test(s) && !Number.isNaN(Date.parse(s));
    case 'date-time':
    case 'datetime':
      return DATE_TIME.test(s);
    case 'duration':
      return GO_DURATION.test(s);
    case 'byte':
      return BASE64.test(s);
    case 'hexcolor':
      return HEX_COLOR.test(s);
    case 'rgbcolor':
      return RGB_COLOR.test(s);
    case 'bsonobjectid':
      return BSON_OBJECT_ID.test(s);
    default:
      return true;
  }
}
