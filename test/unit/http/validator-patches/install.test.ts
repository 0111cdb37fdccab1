import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { PATCHED_VALIDATOR_VERSION, installValidatorPatches, installedValidatorVersion } from '../../../../src/http/validator-patches.js'

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..')

describe('installing the patches of express-openapi-validator', () => {
  it('is written for the release that is installed, and that package.json pins', () => {
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
    expect(installedValidatorVersion()).toBe(PATCHED_VALIDATOR_VERSION)
    expect(manifest.dependencies['express-openapi-validator']).toBe(PATCHED_VALIDATOR_VERSION)
  })

  it.each(['5.6.3', '5.7.0', '6.0.0', 'unknown'])('refuses to patch release %s, naming both versions and what to do', (version) => {
    expect(() => installValidatorPatches(() => version)).toThrow(
      `express-openapi-validator ${version} is installed, but src/http/validator-patches.ts replaces internals of ${PATCHED_VALIDATOR_VERSION}: check each patch against the installed release`,
    )
  })

  it('is applied by the app only: importing the library changes nothing, a refusal changes nothing, installing patches all seven', () => {
    // A process of its own: in this one, other tests may have installed the patches already.
    const script = `
      import validator from 'express-openapi-validator/dist/openapi.validator.js'
      import framework from 'express-openapi-validator/dist/framework/index.js'
      import schemaValidator from 'express-openapi-validator/dist/framework/openapi.schema.validator.js'
      import preprocessor from 'express-openapi-validator/dist/middlewares/parsers/schema.preprocessor.js'
      import util from 'express-openapi-validator/dist/middlewares/util.js'
      import mutator from 'express-openapi-validator/dist/middlewares/parsers/req.parameter.mutator.js'
      const patched = () => [
        validator.OpenApiValidator.prototype.metadataMiddleware.indexed === true,
        schemaValidator.OpenAPISchemaValidator.deferred === true,
        framework.OpenAPIFramework.prototype.loadSpec.skipsBundled === true,
        preprocessor.SchemaPreprocessor.prototype.resolveSchema.withoutCompiling === true,
        validator.OpenApiValidator.prototype.installMiddleware.oneStep === true,
        util.useAjvCache.withoutPaths === true,
        mutator.RequestParameterMutator.prototype.modifyRequest.skipsUnchanged === true,
      ]
      await import('./src/index.ts')
      const { installValidatorPatches } = await import('./src/http/validator-patches.ts')
      const imported = patched()
      let refusal = null
      try { installValidatorPatches(() => '0.0.1') } catch (error) { refusal = error.message }
      const refused = patched()
      installValidatorPatches()
      console.log(JSON.stringify({ imported, refusal: refusal !== null, refused, installed: patched() }))
    `
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 })
    expect(run.stderr).toBe('')
    expect(JSON.parse(run.stdout)).toEqual({
      imported: [false, false, false, false, false, false, false],
      refusal: true,
      refused: [false, false, false, false, false, false, false],
      installed: [true, true, true, true, true, true, true],
    })
  })
})
