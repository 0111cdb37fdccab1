import schemaValidatorModule from 'express-openapi-validator/dist/framework/openapi.schema.validator.js'

type SchemaValidatorOptions = ConstructorParameters<typeof schemaValidatorModule.OpenAPISchemaValidator>[0]
type SchemaValidatorClass = typeof schemaValidatorModule.OpenAPISchemaValidator & { readonly deferred?: true }
/** The module object express-openapi-validator reads the class from at each use (so a replacement takes effect). */
const validatorModule = schemaValidatorModule as { OpenAPISchemaValidator: SchemaValidatorClass }

/**
 * express-openapi-validator checks the OpenAPI document against the OpenAPI schema with an ajv validator that it
 * compiles when it loads the document, even when told not to check (`validateApiSpec: false`): a quarter of a
 * second of start-up spent on a validator that is never called. Its validator class is replaced (in the module
 * object the validator itself reads it from, whether loaded from node_modules or bundled) by one that compiles
 * on the first `validate` call, so the check still runs, unchanged, whenever `validateApiSpec` asks for it.
 * Idempotent; the test suite asserts that the replacement is in place and that invalid documents are still refused.
 */
export function deferOpenApiSchemaCompilation(): void {
  const Original = validatorModule.OpenAPISchemaValidator
  if (typeof Original !== 'function' || Original.deferred) return
  class DeferredOpenAPISchemaValidator {
    static readonly deferred = true
    readonly #options: SchemaValidatorOptions
    #compiled: InstanceType<SchemaValidatorClass> | undefined
    constructor(options: SchemaValidatorOptions) {
      this.#options = options
    }
    validate(document: Parameters<InstanceType<SchemaValidatorClass>['validate']>[0]): ReturnType<InstanceType<SchemaValidatorClass>['validate']> {
      this.#compiled ??= new Original(this.#options)
      return this.#compiled.validate(document)
    }
  }
  validatorModule.OpenAPISchemaValidator = DeferredOpenAPISchemaValidator as unknown as SchemaValidatorClass
}

/** Whether express-openapi-validator now builds its document validator lazily (for tests and diagnostics). */
export function openApiSchemaCompilationDeferred(): boolean {
  return validatorModule.OpenAPISchemaValidator.deferred === true
}
