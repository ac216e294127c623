/** Which strings Kubernetes takes as names: a name it cannot hold names nothing that exists. */
import { DNS1123_SUBDOMAIN } from './label-syntax';

/** A DNS-1123 label's characters (its length, at most 63, is checked apart). */
export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A DNS-1123 label (namespaces, and so scheduler names): at most 63 characters. */
export function isDnsLabel(name: string): boolean {
  return name.length <= 63 && DNS1123_LABEL.test(name);
}

/** The most characters of an object name (a DNS-1123 subdomain: rooms, operations). */
export const MAX_OBJECT_NAME_LENGTH = 253;

/** A DNS-1123 subdomain (object names: rooms, operations): at most 253 characters. */
export function isDnsSubdomain(name: string): boolean {
  return name.length <= MAX_OBJECT_NAME_LENGTH && DNS1123_SUBDOMAIN.test(name);
}
