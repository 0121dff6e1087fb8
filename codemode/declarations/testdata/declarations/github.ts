declare const github: {
  /** Create a new issue in a GitHub repository with a title and optional body. */
  create_issue(input: {
    /** Issue body content (optional) */
    body?: string;
    /** Repository owner (username or organization) */
    owner: string;
    /** Repository name */
    repo: string;
    /** Issue title */
    title: string;
  }): Promise<unknown>;
  /** Find GitHub repositories by name, description, readme, topics, or other metadata. Perfect for discovering projects, finding examples, or locating specific repositories across GitHub. */
  search_repositories(input: {
    /**
     * Return minimal repository information (default: true). When false, returns full GitHub API repository objects.
     * @default true
     */
    minimal_output?: boolean;
    /** Sort order */
    order?: "asc" | "desc";
    /** Page number for pagination (min 1) (minimum: 1) */
    page?: number;
    /** Results per page for pagination (min 1, max 100) (minimum: 1, maximum: 100) */
    perPage?: number;
    /** Repository search query. Examples: 'machine learning in:name stars:>1000 language:python', 'topic:react', 'user:facebook'. Supports advanced search syntax for precise filtering. */
    query: string;
    /** Sort repositories by field, defaults to best match */
    sort?: "stars" | "forks" | "help-wanted-issues" | "updated";
  }): Promise<GithubSearchRepositoriesOutput>;
  /** Create a new pull request in a GitHub repository. */
  create_pull_request(input: {
    /** Base branch name to merge into, e.g. main */
    base: string;
    /** PR description; Markdown supported */
    body?: string;
    /** Create as draft PR */
    draft?: boolean;
    /** Branch containing changes, or owner:branch for a fork */
    head: string;
    /** Allow maintainer edits */
    maintainer_can_modify?: boolean;
    /** Repository owner */
    owner: string;
    repo: string;
    /** GitHub usernames or ORG/team-slug team reviewers to request reviews from */
    reviewers?: string[];
    /** PR title */
    title: string;
  }): Promise<unknown>;
  /**
   * Create or update a single file in a GitHub repository.
   * If updating, you should provide the SHA of the file you want to update. Use this tool to create or update a file in a GitHub repository remotely; do not use it for local file operations.
   *
   * ...
   */
  create_or_update_file(input: {
    /** Branch to create/update the file in */
    branch: string;
    /** Content of the file */
    content: string;
    /** Commit message */
    message: string;
    owner: string;
    /** Path where to create/update the file */
    path: string;
    repo: string;
    /** The blob SHA of the file being replaced. Required if the file already exists. */
    sha?: string;
  }): Promise<unknown>;
};
type GithubSearchRepositoriesOutput = {
  incomplete_results: boolean;
  items: {
    archived: boolean;
    created_at?: string;
    default_branch?: string;
    description?: string;
    /** Whether the repository is disabled */
    disabled?: boolean | null;
    fork: boolean;
    forks_count: number;
    full_name: string;
    has_issues?: boolean | null;
    /** Repository homepage URL */
    homepage?: string;
    html_url: string;
    id: number;
    language?: string;
    /** Repository license */
    license?: { key?: string; name?: string; /** SPDX license identifier */ spdx_id?: string } | null;
    name: string;
    open_issues_count: number;
    /** Authenticated user's repository permissions */
    permissions?: { admin?: boolean | null; pull?: boolean | null; push?: boolean | null } | null;
    private: boolean;
    /** Last push time as an ISO 8601 UTC timestamp */
    pushed_at?: string;
    /** Repository size in kilobytes */
    size?: number | null;
    stargazers_count: number;
    topics?: string[] | null;
    updated_at?: string;
    /** Repository visibility */
    visibility?: "public" | "private" | "internal";
  }[] | null;
  total_count: number;
};
