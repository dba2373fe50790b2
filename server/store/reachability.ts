// Whether the database can be reached, as far as this process knows, so that
// requests fail at once (503) instead of waiting for a server that is gone.
//
// The driver's monitor checks the server every heartbeat (1 s); its events
// give the state. An operation that cannot connect also says the server is
// gone, sooner than the next heartbeat (the driver itself keeps believing
// the last heartbeat until then). A timeout does not: one slow operation is
// no outage, and a frozen server fails its next heartbeat anyway.
import type { MongoClient, TopologyDescription } from 'mongodb';
import { isConnectionFailure } from './errors.js';

const writable = (t: TopologyDescription) => [...t.servers.values()].some((s) => s.isWritable);

export class Reachability {
  private up = true;
  /** Whether the last known topology has a server that takes writes. */
  private topologyWritable = true;

  constructor(client: MongoClient) {
    client.on('topologyDescriptionChanged', (e) => {
      this.topologyWritable = writable(e.newDescription);
      this.up = this.topologyWritable;
    });
    client.on('serverHeartbeatSucceeded', () => {
      this.up = this.topologyWritable;
    });
  }

  get available(): boolean {
    return this.up;
  }

  /** Reports a failed operation: one that could not reach the server marks it gone until a heartbeat gets through. */
  operationFailed(err: unknown): void {
    if (isConnectionFailure(err)) this.up = false;
  }
}
