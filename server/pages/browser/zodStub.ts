// What page bundles get for `zod` and `@anatine/zod-openapi` (assets.ts): a
// schema that accepts every call and property and builds nothing. Pages
// import the contract only for its routes' paths and methods (the ts-rest
// client); validation stays on the server, and zod with its OpenAPI
// extension (70 KB) stays out of every page.
type Stub = ((...args: unknown[]) => Stub) & { readonly [key: string]: Stub };

const stub: Stub = new Proxy((() => stub) as unknown as Stub, {
  // `then` undefined: a schema is never mistaken for a promise.
  get: (_target, key) => (key === 'then' ? undefined : stub),
  apply: () => stub,
  ownKeys: () => [],
});

export const z = stub;
export default stub;
export const extendZodWithOpenApi = (): void => undefined;
