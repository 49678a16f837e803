/**
 * Kubernetes resource quantities as pds accepts and reports them (`docs/api.md#quotas-object`): the grammar of
 * `QuantityParam` (`core/operations/parameters.ts`), `<number>[m|k|M|G|T|Ki|Mi|Gi|Ti]`, read as plain numbers so quota
 * pressure and headroom can be compared. Written here rather than taken from `@kubernetes/client-node`, whose
 * `quantityToScalar` is not exported from its entry point, mixes numbers and bigints, refuses `1.5Gi`, and would load
 * the whole cluster client into `core/`.
 */

const SUFFIX: Readonly<Record<string, number>> = {
  '': 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};

const QUANTITY = /^(\d+(?:\.\d+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/;

/**
 * A quantity as a number of base units (cores for CPU, bytes for memory, a count for pods).
 * @returns `undefined` for text that is not a quantity of that grammar (e.g. `"1e3"`, `"-1"`, `""`).
 * @example quantityValue('250m') // 0.25; quantityValue('1Gi') // 1073741824; quantityValue('20') // 20
 */
export function quantityValue(text: string): number | undefined {
  const m = QUANTITY.exec(text.trim());
  return m ? Number(m[1]) * SUFFIX[m[2] ?? '']! : undefined;
}

/** One quota dimension of a tenant: what is allocated and what is used, as numbers (see {@link quantityValue}). */
export interface QuotaUse {
  resource: 'cpu' | 'memory' | 'pods';
  allocated: number;
  used: number;
  /** `used / allocated`; `Infinity` when nothing is allocated but something is used, 0 when neither. */
  ratio: number;
}

/**
 * Each dimension of a tenant's quotas that both sides state as a readable quantity (others are left out: a backend
 * that cannot tell does not make pds guess).
 * @param allocated the tenant's quotas, e.g. `{ cpu: '4', memory: '8Gi', pods: '20' }`.
 * @param used what its services request, in the same form.
 */
export function quotaUse(
  allocated: Readonly<Record<'cpu' | 'memory' | 'pods', string>>,
  used: Readonly<Record<'cpu' | 'memory' | 'pods', string>>,
): QuotaUse[] {
  const result: QuotaUse[] = [];
  for (const resource of ['cpu', 'memory', 'pods'] as const) {
    const a = quantityValue(allocated[resource]);
    const u = quantityValue(used[resource]);
    if (a === undefined || u === undefined) continue;
    result.push({ resource, allocated: a, used: u, ratio: a > 0 ? u / a : u > 0 ? Infinity : 0 });
  }
  return result;
}
