// `bernstein-a2a/client` is the client package, @bernstein-a2a/client (packages/client).
export * from '@bernstein-a2a/client'
