/**
 * Validation of `metadata` the way the real server words it (names, namespaces, labels).
 */
import type { StatusCause } from './api-error';
import { fieldText, type KubeObject } from './kube-object';
import type { NameRule } from './resource-type';
import { isRecord } from '../../../common/src/json/is-record';
import { DNS1123_SUBDOMAIN, isLabelValue, LABEL_VALUE_MESSAGE, labelKeyProblems, SUBDOMAIN_MESSAGE } from '../../../common/src/kube/label-syntax';
import { DNS1123_LABEL } from '../../../common/src/kube/object-names';

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

const LABEL_MSG = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

function invalidValue(field: string, value: string, detail: string): StatusCause {
  return { reason: 'FieldValueInvalid', field, message: `Invalid value: ${JSON.stringify(value)}: ${detail}` };
}

/** Problems with a name under a rule, as detail strings. */
export function nameProblems(name: string, rule: NameRule): string[] {
  switch (rule) {
    case 'path':
      if (name === '.' || name === '..') return [`may not be '${name}'`];
      return /[/%]/.test(name) ? [`may not contain '/'`] : [];
    case 'label':
      if (name.length > 63) return ['must be no more than 63 characters'];
      return DNS1123_LABEL.test(name) ? [] : [LABEL_MSG];
    case 'dns1035':
      if (name.length > 63) return ['must be no more than 63 characters'];
      return DNS1035_LABEL.test(name) ? [] : [DNS1035_MSG];
    case 'subdomain':
      if (name.length > 253) return ['must be no more than 253 characters'];
      return DNS1123_SUBDOMAIN.test(name) ? [] : [SUBDOMAIN_MESSAGE];
  }
}

/** Validates metadata of a new or updated object; returns causes (empty when valid). */
export function validateObjectMeta(obj: KubeObject, rule: NameRule, namespaced: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  const meta = obj.metadata;
  if (meta.name !== undefined && typeof meta.name !== 'string') {
    return [{ reason: 'FieldValueTypeInvalid', field: 'metadata.name', message: `Invalid value: ${JSON.stringify(meta.name)}: must be a string` }];
  }
  const name = meta.name ?? '';
  if (name === '') {
    causes.push({ reason: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' });
  } else {
    for (const p of nameProblems(name, rule)) causes.push(invalidValue('metadata.name', name, p));
  }
  if (namespaced && !meta.namespace) causes.push({ reason: 'FieldValueRequired', field: 'metadata.namespace', message: 'Required value' });
  const labels: unknown = meta.labels; // JSON from a client: its values may be anything
  for (const [key, value] of Object.entries(isRecord(labels) ? labels : {})) {
    for (const p of labelKeyProblems(key)) causes.push(invalidValue('metadata.labels', key, p));
    if (!isLabelValue(value)) causes.push(invalidValue(`metadata.labels`, fieldText(value), LABEL_VALUE_MESSAGE));
  }
  if (meta.labels !== undefined && !isRecord(meta.labels)) causes.push({ reason: 'FieldValueTypeInvalid', field: 'metadata.labels', message: 'Invalid value: must be an object of strings' });
  if (meta.annotations !== undefined && !isRecord(meta.annotations)) causes.push({ reason: 'FieldValueTypeInvalid', field: 'metadata.annotations', message: 'Invalid value: must be an object of strings' });
  else {
    for (const [key, value] of Object.entries(meta.annotations ?? {})) {
      if (typeof value !== 'string') causes.push({ reason: 'FieldValueTypeInvalid', field: `metadata.annotations[${key}]`, message: 'Invalid value: must be a string' });
    }
  }
  if (meta.finalizers !== undefined && !(Array.isArray(meta.finalizers) && meta.finalizers.every((f) => typeof f === 'string'))) {
    causes.push({ reason: 'FieldValueTypeInvalid', field: 'metadata.finalizers', message: 'Invalid value: must be a list of strings' });
  }
  if (meta.ownerReferences !== undefined) {
    if (!Array.isArray(meta.ownerReferences)) causes.push({ reason: 'FieldValueTypeInvalid', field: 'metadata.ownerReferences', message: 'Invalid value: must be a list' });
    else {
      meta.ownerReferences.forEach((o: unknown, i) => {
        const ref = isRecord(o) ? o : {};
        for (const f of ['apiVersion', 'kind', 'name', 'uid']) {
          if (typeof ref[f] !== 'string' || ref[f] === '') causes.push({ reason: 'FieldValueRequired', field: `metadata.ownerReferences[${i}].${f}`, message: 'Required value' });
        }
      });
      const controllers = meta.ownerReferences.filter((o: unknown) => isRecord(o) && o.controller === true);
      if (controllers.length > 1) {
        causes.push({
          reason: 'FieldValueInvalid',
          field: 'metadata.ownerReferences',
          message: `Invalid value: ${JSON.stringify(controllers)}: Only one reference can have Controller set to true. Found "true" in references for ${controllers.map((c) => `${c.kind}/${c.name}`).join(' and ')}`,
        });
      }
    }
  }
  for (const key of Object.keys(isRecord(meta.annotations) ? meta.annotations : {})) {
    for (const p of labelKeyProblems(key)) causes.push(invalidValue('metadata.annotations', key, p));
  }
  return causes;
}
