/** Median of a non-empty list (NaN for an empty one). */
export function median(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b)
  if (finite.length === 0) return Number.NaN
  const mid = Math.floor(finite.length / 2)
  return finite.length % 2 === 1 ? (finite[mid] as number) : ((finite[mid - 1] as number) + (finite[mid] as number)) / 2
}

export function max(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v))
  return finite.length === 0 ? Number.NaN : Math.max(...finite)
}
