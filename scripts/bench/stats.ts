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

/** The median of `a[i] ÷ b[i]` over pairs measured together (NaN when the lists are empty or of unequal length). */
export function medianOfRatios(a: readonly number[], b: readonly number[]): number {
  if (a.length === 0 || a.length !== b.length) return Number.NaN
  return median(a.map((value, i) => value / (b[i] as number)))
}
