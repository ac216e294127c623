/**
 * A small CRD for the sandbox's own tests: namespaced `widgets.test.roomkeeper.io` with printer
 * columns, status and scale subresources, a selectable field, a required field, an enum and a CEL rule.
 */
export const WIDGET_GROUP = 'test.roomkeeper.io';
export const WIDGET_VERSION = 'v1';
export const WIDGET_PLURAL = 'widgets';

export function widgetCrd(): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${WIDGET_PLURAL}.${WIDGET_GROUP}` },
    spec: {
      group: WIDGET_GROUP,
      scope: 'Namespaced',
      names: { plural: WIDGET_PLURAL, singular: 'widget', kind: 'Widget', shortNames: ['wd'] },
      versions: [{
        name: WIDGET_VERSION,
        served: true,
        storage: true,
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
        selectableFields: [{ jsonPath: '.spec.color' }],
        additionalPrinterColumns: [
          { name: 'Color', type: 'string', jsonPath: '.spec.color' },
          { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
          { name: 'State', type: 'string', jsonPath: '.status.state' },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['color'],
                properties: {
                  color: { type: 'string', enum: ['red', 'green', 'blue'] },
                  replicas: { type: 'integer', minimum: 0, default: 1 },
                  size: { type: 'string' },
                },
                'x-kubernetes-validations': [{ rule: 'self.replicas <= 10', message: 'replicas must be at most 10' }],
              },
              status: {
                type: 'object',
                properties: { state: { type: 'string' }, replicas: { type: 'integer' } },
              },
            },
          },
        },
      }],
    },
  };
}

export function widget(name: string, spec: Record<string, unknown>, namespace = 'default'): Record<string, unknown> {
  return { apiVersion: `${WIDGET_GROUP}/${WIDGET_VERSION}`, kind: 'Widget', metadata: { name, namespace }, spec };
}

/** A widget as the API server answers it (client-node types custom objects as `object`). */
export interface Widget {
  apiVersion: string;
  kind: string;
  metadata: { name: string; uid: string; resourceVersion: string; generation: number; creationTimestamp: string; labels?: Record<string, string> };
  spec: { color?: string; replicas?: number };
  status?: { state?: string; replicas?: number };
}
