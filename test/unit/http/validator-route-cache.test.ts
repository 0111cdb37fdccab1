import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { memoizeValidatorRouteCompilation } from '../../../src/http/validator-route-cache.js'

type Compiled = { regexp: RegExp; keys: { name: string }[] }
const fromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'))
const pathToRegexpModule = fromValidator('path-to-regexp') as { pathToRegexp: (path: unknown, options?: Record<string, unknown>) => Compiled }

describe('memoizeValidatorRouteCompilation', () => {
  memoizeValidatorRouteCompilation()
  memoizeValidatorRouteCompilation() // idempotent
  const compile = (path: unknown, options?: Record<string, unknown>): Compiled => pathToRegexpModule.pathToRegexp(path, options)

  it('compiles a template once per option set and matches as the original does', () => {
    const a = compile('/tasks/:task_id', { sensitive: false, strict: false })
    expect(compile('/tasks/:task_id', { strict: false, sensitive: false })).toBe(a)
    expect(a.regexp.exec('/tasks/abc')?.[1]).toBe('abc')
    expect(a.regexp.exec('/TASKS/abc')?.[1]).toBe('abc')
    const sensitive = compile('/tasks/:task_id', { sensitive: true, strict: false })
    expect(sensitive).not.toBe(a)
    expect(sensitive.regexp.exec('/TASKS/abc')).toBeNull()
    expect(compile('/tasks/:task_id', { sensitive: false, strict: false, extra: undefined })).toBe(a)
    expect(compile('/other/:id', { sensitive: false, strict: false })).not.toBe(a)
  })

  it('does not cache options it cannot compare by value', () => {
    const options = { sensitive: false, strict: false, nested: { x: 1 } }
    expect(compile('/tasks/:task_id', options)).not.toBe(compile('/tasks/:task_id', options))
  })
})
