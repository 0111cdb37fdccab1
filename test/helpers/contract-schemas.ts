import { Ajv, type ValidateFunction } from 'ajv'
import { loadContract } from '../../src/http/openapi-document.js'

/**
 * Validators for the contract's own component schemas (no second copy of any shape): the document's
 * `components` compiled by ajv, `$ref`s resolved inside it. `example` and other annotations are ignored.
 */
export function contractSchemas(): (name: string) => ValidateFunction {
  const ajv = new Ajv({ strict: false, allErrors: true })
  ajv.addSchema({ $id: 'openapi', components: loadContract().document['components'] })
  return (name) => {
    const validate = ajv.getSchema(`openapi#/components/schemas/${name}`)
    if (!validate) throw new Error(`no schema ${name} in openapi.yaml`)
    return validate
  }
}

/** ajv's complaints about `value` as one readable string ('' when valid). */
export function violations(validate: ValidateFunction, value: unknown): string {
  return validate(value) ? '' : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`).join('; ')
}
