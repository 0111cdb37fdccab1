// `bernstein-a2a/client` is the client package, @bernstein-a2a/client (packages/client): one client, one set of types,
// whichever name a program imports it by.
export * from '@bernstein-a2a/client'
