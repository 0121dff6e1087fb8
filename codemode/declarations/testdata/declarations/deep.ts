declare const deep: {
  /** Objects nested twelve deep; past depth 8 the rest is unknown. */
  nest(input: {
    root: {
      level1: {
        level2: {
          level3: {
            level4: { level5: { level6: { level7: { level8: { [key: string]: unknown } } } } };
          };
        };
      };
    };
    matrix?: number[][][][][][][][][][][][];
  }): Promise<unknown>;
};
