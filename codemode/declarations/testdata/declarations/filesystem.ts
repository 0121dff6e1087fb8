declare const filesystem: {
  /** Read the complete contents of a file from the file system as text. Handles various text encodings and provides detailed error messages if the file cannot be read. Use this tool when you need to examine the contents of a single file. Use the 'head' parameter to return only the first N lines of a... */
  read_text_file(input: {
    path: string;
    /** If provided, returns only the last N lines of the file */
    tail?: number;
    /** If provided, returns only the first N lines of the file */
    head?: number;
  }): Promise<FilesystemReadTextFileOutput>;
  /** Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead. */
  read_file(input: { path: string; tail?: number; head?: number }): Promise<unknown>;
  /** Read the contents of multiple files simultaneously. This is more efficient than reading files one by one when you need to analyze or compare multiple files. Each file's content is returned with its path as a reference. Failed reads for individual files won't stop the entire operation. Only works... */
  read_multiple_files(input: {
    /** Array of file paths to read. Each path must be a string pointing to a valid file within allowed directories. (minItems: 1) */
    paths: string[];
  }): Promise<unknown>;
  /** Make line-based edits to a text file. Each edit replaces exact line sequences with new content. Returns a git-style diff showing the changes made. Only works within allowed directories. */
  edit_file(input: {
    path: string;
    edits: {
      /** Text to search for - must match exactly */
      oldText: string;
      /** Text to replace with */
      newText: string;
    }[];
    /**
     * Preview changes using git-style diff format
     * @default false
     */
    dryRun?: boolean;
  }): Promise<unknown>;
  /** Get a recursive tree view of files and directories as a JSON structure. Each entry includes 'name', 'type' (file/directory), and 'children' for directories. Files have no children array, while directories always have a children array (which may be empty). The output is formatted with 2-space... */
  directory_tree(input: { path: string; /** @default [] */ excludePatterns?: string[] }): Promise<FilesystemReadTextFileOutput>;
  /** Get a detailed listing of all files and directories in a specified path, including sizes. Results clearly distinguish between files and directories with [FILE] and [DIR] prefixes. This tool is useful for understanding directory structure and finding specific files within a directory. Only works... */
  list_directory_with_sizes(input: {
    path: string;
    /**
     * Sort entries by name or size
     * @default "name"
     */
    sortBy?: "name" | "size";
  }): Promise<unknown>;
  /** Returns the list of directories that this server is allowed to access. Subdirectories within these allowed directories are also accessible. Use this to understand which directories and their nested paths are available before trying to access files. */
  list_allowed_directories(input?: {}): Promise<unknown>;
};
type FilesystemReadTextFileOutput = { content: string };
