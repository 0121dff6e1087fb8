declare const recursive: {
  /** A recursive tree node via $ref: expanded once, then unknown. */
  save_tree(input: {
    /** A tree node */
    tree: { name: string; children?: { [key: string]: unknown }[] };
    /** The same shape again (a reference to the root) */
    parent?: { [key: string]: unknown };
  }): Promise<RecursiveSaveTreeOutput>;
  /** Mutual recursion through draft-07 definitions. */
  mutual(input?: {
    person?: {
      name?: string;
      employer?: { title?: string; ceo?: { [key: string]: unknown } };
    };
  }): Promise<unknown>;
  /** JSON pointers with escapes, and references that do not resolve. */
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
