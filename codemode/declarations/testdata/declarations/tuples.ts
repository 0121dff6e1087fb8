declare const tuples: {
  /** Tuples in 2020-12 (prefixItems) and draft-07 (items as an array). */
  plot(input: {
    /** [x, y] */
    point: [number, number];
    labelled?: [string, number, ...boolean[]];
    open?: [string, ...unknown[]];
    /** (minItems: 2, maxItems: 3) */
    bounded?: [number, number, number?];
    /** (minItems: 1) */
    optionalUnion?: [string, (number | null)?];
    draft7?: [string, number];
    draft7Rest?: [string, ...(string | number)[]];
    /** (minItems: 2, maxItems: 2) */
    draft7Open?: [string, string];
    empty?: [];
    literal?: ["a", 1, true];
  }): Promise<unknown>;
};
