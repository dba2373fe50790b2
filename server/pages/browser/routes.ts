// The routes the page client calls: the contract's. Page bundles get a copy
// of this module holding each route's method and path only (assets.ts), so
// no page carries a schema or its documentation; the server validates.
import { contract } from '../../../contract/index.js';

export const routes = contract;
