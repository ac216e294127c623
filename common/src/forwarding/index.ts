/** Forwarding room information to external receivers over gRPC. */
export * from './event-forwarder';
export * from './forward-messages';
export * from './forward-receiver';
export * from './forwarder-client-pool';
export * from './forwarder-options';
export * from './forwarder-protocol';
export * from './forwarder-types';
