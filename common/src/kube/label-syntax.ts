/**
 * What Kubernetes takes as a label key (a qualified name) and a label value, with its own words:
 * the sandbox's API server refuses objects with them, the gateway refuses selectors with them.
 */

export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

export const SUBDOMAIN_MESSAGE = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
export const LABEL_VALUE_MESSAGE = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/** Problems with a label (or annotation) key, as the API server words them; empty when it is one. */
export function labelKeyProblems(key: string): string[] {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : '';
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const problems: string[] = [];
  if (prefix.length > 253) problems.push('prefix part must be no more than 253 characters');
  if (slash >= 0 && (prefix === '' || !DNS1123_SUBDOMAIN.test(prefix))) problems.push('prefix part ' + SUBDOMAIN_MESSAGE);
  if (name.length === 0 || name.length > 63 || !QUALIFIED_NAME.test(name)) {
    problems.push("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  }
  return problems;
}

/** Whether a value may be a label's (at most 63 characters). */
export function isLabelValue(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 63 && LABEL_VALUE.test(value);
}
