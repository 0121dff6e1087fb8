declare const recursive: {
  /**
   * A recursive tree node via $ref: expanded once, then unknown.
   * @param input.tree A tree node
   * @param input.parent The same shape again (a reference to the root)
   */
  save_tree(input: {
    /** A tree node */
    tree: { name: string; children?: unknown[] };
    /** The same shape again (a reference to the root) */
    parent?: unknown;
  }): Promise<RecursiveSaveTreeOutput>;
  /** Mutual recursion through draft-07 definitions. */
  mutual(input?: { person?: { name?: string; employer?: { title?: string; ceo?: unknown } } }): Promise<unknown>;
  /**
   * JSON pointers with escapes, and references that do not resolve.
   * @param input.slash Key with a slash
   * @param input.tilde Key with a tilde
   * @param input.space (format: int64)
   * @param input.nestedPointer Key with a slash
   * @param input.withSibling The sibling description wins
   * @param input.refAndType Key with a slash
   */
  pointers(input?: {
    /** Key with a slash */
    slash?: { x?: number };
    /** Key with a tilde */
    tilde?: "one" | "two";
    /** (format: int64) */
    space?: number;
    indexed?: boolean;
    /** Key with a slash */
    nestedPointer?: { x?: number };
    missing?: unknown;
    external?: unknown;
    anchor?: unknown;
    /** The sibling description wins */
    withSibling?: "one" | "two";
    /** Key with a slash */
    refAndType?: { x?: number } & { more?: boolean };
  }): Promise<unknown>;
};
type RecursiveSaveTreeOutput = {
  /** Any JSON value */
  saved: string | number | boolean | unknown[] | { [key: string]: unknown } | null;
};
