declare const github: {
  /**
   * Create an issue
   *
   * Any user with pull access to a repository can create an issue. If issues are disabled in the repository, the API returns a `410 Gone` status.
   *
   * ...
   */
  issues_create(input: {
    /** Login for the user that this issue should be assigned to. _NOTE: Only users with push access can set the assignee for new issues. The assignee is silently dropped otherwise. **This field is closing down.**_ */
    assignee?: string | null;
    /** Logins for Users to assign to this issue. _NOTE: Only users with push access can set assignees for new issues. Assignees are silently dropped otherwise._ */
    assignees?: string[];
    /** The contents of the issue. */
    body?: string;
    /** An array of issue field values to set on this issue. Each field value must include the field ID and the value to set. Issue fields are only available for organization-owned repositories with the feature enabled. Field values are silently dropped... */
    issue_field_values?: {
      /** The ID of the issue field to set */
      field_id: number;
      /** The value to set for the field. For multi-select fields, provide an array of option names. */
      value: string | number | string[];
    }[];
    /** Labels to associate with this issue. _NOTE: Only users with push access can set labels for new issues. Labels are silently dropped otherwise._ */
    labels?: (string | {
      color?: string | null;
      description?: string | null;
      id?: number;
      name?: string;
    })[];
    milestone?: string | number | null;
    /** The account owner of the repository. The name is not case sensitive. */
    owner: string;
    /** The name of the repository without the `.git` extension. The name is not case sensitive. */
    repo: string;
    /** The title of the issue. */
    title: string | number;
    /** The name of the issue type to associate with this issue. _NOTE: Only users with push access can set the type for new issues. The type is silently dropped otherwise._ */
    type?: string | null;
  }): Promise<GithubIssue>;
  /**
   * Create an issue comment
   *
   * You can use the REST API to create comments on issues and pull requests. Every pull request is an issue, but not every issue is a pull request.
   *
   * ...
   * Calls the backend tool "issues_create-comment".
   */
  issues_create_comment(input: {
    /** The contents of the comment. */
    body: string;
    /** The number that identifies the issue. */
    issue_number: number;
    owner: string;
    repo: string;
  }): Promise<GithubIssuesCreateCommentOutput>;
  /**
   * Get an issue
   *
   * The API returns a `301 Moved Permanently` status if the issue was
   * transferred to another repository. If
   * the issue was transferred to or deleted from a repository where the authenticated user lacks read access, the API
   * returns a `404 Not Found` status. If the issue was deleted from a...
   */
  issues_get(input: { issue_number: number; owner: string; repo: string }): Promise<GithubIssue>;
  /**
   * List repository issues
   *
   * List issues in a repository. Only open issues will be listed.
   *
   * > [!NOTE]
   * > GitHub's REST API considers every pull request an issue, but not every issue is a pull request. For this reason, "Issues" endpoints may return both issues and pull requests in the response. You can...
   * Calls the backend tool "issues_list-for-repo".
   */
  issues_list_for_repo(input: {
    /** Can be the name of a user. Pass in `none` for issues with no assigned user, and `*` for issues assigned to any user. */
    assignee?: string;
    /** The user that created the issue. */
    creator?: string;
    /**
     * The direction to sort the results by.
     * @default "desc"
     */
    direction?: "asc" | "desc";
    /**
     * A comma-separated list of issue field filters in `field_slug:value` format.
     * Only issues matching all specified field values are returned.
     * Requires issue fields to be enabled for the repository. Issue fields are
     * not available for user-owned...
     */
    issue_field_values?: string;
    /** A list of comma separated label names. Example: `bug,ui,@high` */
    labels?: string;
    /** A user that's mentioned in the issue. */
    mentioned?: string;
    /** If an `integer` is passed, it should refer to a milestone by its `number` field. If the string `*` is passed, issues with any milestone are accepted. If the string `none` is passed, issues without milestones are returned. */
    milestone?: string;
    owner: string;
    /**
     * The page number of the results to fetch. For more information, see "Using pagination in the REST API."
     * @default 1
     */
    page?: number;
    /**
     * The number of results per page (max 100). For more information, see "Using pagination in the REST API."
     * @default 30
     */
    per_page?: number;
    repo: string;
    /** Only show results that were last updated after the given time. This is a timestamp in ISO 8601 format: `YYYY-MM-DDTHH:MM:SSZ`. (format: date-time) */
    since?: string;
    /**
     * What to sort results by.
     * @default "created"
     */
    sort?: "created" | "updated" | "comments";
    /**
     * Indicates the state of the issues to return.
     * @default "open"
     */
    state?: "open" | "closed" | "all";
    /** Can be the name of an issue type. If the string `*` is passed, issues with any type are accepted. If the string `none` is passed, issues without type are returned. */
    type?: string;
  }): Promise<unknown>;
  /**
   * Update an issue
   *
   * Issue owners and users with push access or Triage role can edit an issue.
   *
   * This endpoint supports the following custom media types. For more information, see "Media types."
   *
   * ...
   */
  issues_update(input: {
    /** Username to assign to this issue. **This field is closing down.** */
    assignee?: string | null;
    /** Usernames to assign to this issue. Pass one or more user logins to _replace_ the set of assignees on this issue. Send an empty array (`[]`) to clear all assignees from the issue. Only users with push access can set assignees for new issues. Without... */
    assignees?: (string | {
      /** The confidence level for this assignee choice. */
      confidence?: "low" | "medium" | "high";
      login?: string;
      /** Optional reasoning for selecting this assignee. */
      rationale?: string;
      /** If `true`, the change is stored as a pending suggestion for human review rather than applied directly. */
      suggest?: boolean;
    })[];
    body?: string | null;
    /** The ID of the issue to mark as the canonical duplicate when `state_reason` is `duplicate`. The issue must exist and be accessible to the authenticated user. Ignored when `state_reason` is not `duplicate`. */
    duplicate_issue_id?: number;
    /** An array of issue field values to set on this issue. Each field value must include the field ID and the value to set. Only users with push access can set field values for issues */
    issue_field_values?: {
      /** The confidence level for this field value choice. */
      confidence?: "low" | "medium" | "high";
      field_id: number;
      /** Optional reasoning for setting this field value. */
      rationale?: string;
      suggest?: boolean;
      value: string | number | string[];
    }[];
    issue_number: number;
    /** Labels to associate with this issue. Pass one or more labels to _replace_ the set of labels on this issue. Send an empty array (`[]`) to clear all labels from the issue. Only users with push access can set labels for issues. Without push access to... */
    labels?: (string | {
      color?: string | null;
      /** The confidence level for this label choice. */
      confidence?: "low" | "medium" | "high";
      description?: string | null;
      id?: number;
      name?: string;
      /** Optional reasoning for selecting this label. */
      rationale?: string;
      suggest?: boolean;
    })[];
    milestone?: string | number | null;
    owner: string;
    repo: string;
    /** The open or closed state of the issue. */
    state?: "open" | "closed";
    /** The reason for the state change. Ignored unless `state` is changed. */
    state_reason?: "completed" | "not_planned" | "duplicate" | "reopened" | null;
    title?: string | number | null;
    type?: string | {
      /** The confidence level for this type choice. */
      confidence?: "low" | "medium" | "high";
      /** Optional reasoning for selecting this type. */
      rationale?: string;
      suggest?: boolean;
      /** The name of the issue type to associate with this issue, or `null` to remove the current issue type. */
      value?: string | null;
    } | null;
  }): Promise<unknown>;
  /**
   * Get a pull request
   *
   * Draft pull requests are available in public repositories with GitHub Free and GitHub Free for organizations, GitHub Pro, and legacy per-repository billing plans, and in public and private repositories with GitHub Team and GitHub Enterprise Cloud. For more information, see...
   */
  pulls_get(input: {
    owner: string;
    /** The number that identifies the pull request. */
    pull_number: number;
    repo: string;
  }): Promise<GithubPullsGetOutput>;
  /**
   * List pull requests
   *
   * Lists pull requests in a specified repository.
   *
   * Draft pull requests are available in public repositories with GitHub
   * Free and GitHub Free for organizations, GitHub Pro, and legacy per-repository billing
   * plans, and in public and private repositories with GitHub Team and GitHub...
   */
  pulls_list(input: {
    /** Filter pulls by base branch name. Example: `gh-pages`. */
    base?: string;
    /** The direction of the sort. Default: `desc` when sort is `created` or sort is not specified, otherwise `asc`. */
    direction?: "asc" | "desc";
    /** Filter pulls by head user or head organization and branch name in the format of `user:ref-name` or `organization:ref-name`. For example: `github:new-script-format` or `octocat:test-branch`. */
    head?: string;
    owner: string;
    page?: number;
    per_page?: number;
    repo: string;
    /**
     * What to sort results by. `popularity` will sort by the number of comments. `long-running` will sort by date created and will limit the results to pull requests that have been open for more than a month and have had activity within the past month.
     * @default "created"
     */
    sort?: "created" | "updated" | "popularity" | "long-running";
    /**
     * Either `open`, `closed`, or `all` to filter by state.
     * @default "open"
     */
    state?: "open" | "closed" | "all";
  }): Promise<unknown>;
  /**
   * Get a repository
   *
   * The `parent` and `source` objects are present when the repository is a fork. `parent` is the repository this repository was forked from, `source` is the ultimate source for the network.
   *
   * ...
   */
  repos_get(input: { owner: string; repo: string }): Promise<GithubReposGetOutput>;
  /**
   * List commits
   *
   * **Signature verification object**
   *
   * The response will include a `verification` object that describes the result of verifying the commit's signature. The following fields are included in the `verification` object:
   *
   * ...
   * Calls the backend tool "repos_list-commits".
   */
  repos_list_commits(input: {
    /** GitHub username or email address to use to filter by commit author. */
    author?: string;
    /** GitHub username or email address to use to filter by commit committer. */
    committer?: string;
    owner: string;
    page?: number;
    /** Only commits containing this file path will be returned. */
    path?: string;
    per_page?: number;
    repo: string;
    /** SHA or branch to start listing commits from. Default: the repository’s default branch (usually `main`). */
    sha?: string;
    /** Only show results that were last updated after the given time. This is a timestamp in ISO 8601 format: `YYYY-MM-DDTHH:MM:SSZ`. Due to limitations of Git, timestamps must be between 1970-01-01 and 2099-12-31 (inclusive) or unexpected results may be... (format: date-time) */
    since?: string;
    /** Only commits before this date will be returned. This is a timestamp in ISO 8601 format: `YYYY-MM-DDTHH:MM:SSZ`. Due to limitations of Git, timestamps must be between 1970-01-01 and 2099-12-31 (inclusive) or unexpected results may be returned. (format: date-time) */
    until?: string;
  }): Promise<unknown>;
  /**
   * Search issues and pull requests
   *
   * Find issues by state and keyword. This method returns up to 100 results per page.
   *
   * When searching for issues, you can get text match metadata for the issue **title**, issue **body**, and issue **comment body** fields when you pass the `text-match` media type. For...
   * Calls the backend tool "search_issues-and-pull-requests".
   */
  search_issues_and_pull_requests(input: {
    /**
     * Set to `true` to use advanced search.
     * Example: `http://api.github.com/search/issues?q={query}&advanced_search=true`
     */
    advanced_search?: string;
    /**
     * Determines whether the first search result returned is the highest number of matches (`desc`) or lowest number of matches (`asc`). This parameter is ignored unless you provide `sort`.
     * @default "desc"
     */
    order?: "desc" | "asc";
    page?: number;
    per_page?: number;
    /** The query contains one or more search keywords and qualifiers. Qualifiers allow you to limit your search to specific areas of GitHub. The REST API supports the same qualifiers as the web interface for GitHub. To learn more about the format of the... */
    q: string;
    /**
     * The type of search to perform on issues. When not specified, the default is lexical search.
     *
     * - `semantic` — performs a pure semantic (vector) search using embedding-based understanding.
     * - `hybrid` — combines semantic search with lexical search for...
     */
    search_type?: "semantic" | "hybrid";
    /** Sorts the results of your query by the number of `comments`, `reactions`, `reactions-+1`, `reactions--1`, `reactions-smile`, `reactions-thinking_face`, `reactions-heart`, `reactions-tada`, or `interactions`. You can also sort results by how recently... */
    sort?: "comments" | "reactions" | "reactions-+1" | "reactions--1" | "reactions-smile" | "reactions-thinking_face" | "reactions-heart" | "reactions-tada" | "interactions" | "created" | "updated";
  }): Promise<GithubSearchIssuesAndPullRequestsOutput>;
};
type GithubIssue = {
  active_lock_reason?: string | null;
  assignee?: { [key: string]: unknown } | null;
  assignees?: unknown[] | null;
  author_association?: "COLLABORATOR" | "CONTRIBUTOR" | "FIRST_TIMER" | "FIRST_TIME_CONTRIBUTOR" | "MANNEQUIN" | "MEMBER" | "NONE" | "OWNER" | null;
  body?: string | null;
  body_html?: string | null;
  body_text?: string | null;
  closed_at?: string | null;
  closed_by?: { [key: string]: unknown } | null;
  comments?: number | null;
  comments_url?: string | null;
  created_at?: string | null;
  draft?: boolean | null;
  events_url?: string | null;
  html_url?: string | null;
  id?: number | null;
  issue_dependencies_summary?: { [key: string]: unknown } | null;
  issue_field_values?: unknown[] | null;
  labels?: unknown[] | null;
  labels_url?: string | null;
  locked?: boolean | null;
  milestone?: { [key: string]: unknown } | null;
  node_id?: string | null;
  number?: number | null;
  parent_issue_url?: string | null;
  performed_via_github_app?: { [key: string]: unknown } | null;
  pinned_comment?: { [key: string]: unknown } | null;
  pull_request?: { [key: string]: unknown } | null;
  reactions?: { [key: string]: unknown } | null;
  repository?: { [key: string]: unknown } | null;
  repository_url?: string | null;
  state?: string | null;
  state_reason?: "completed" | "reopened" | "not_planned" | "duplicate" | null;
  sub_issues_summary?: { [key: string]: unknown } | null;
  timeline_url?: string | null;
  title?: string | null;
  type?: { [key: string]: unknown } | null;
  updated_at?: string | null;
  url?: string | null;
  user?: { [key: string]: unknown } | null;
};
type GithubIssuesCreateCommentOutput = {
  /** How the author is associated with the repository. */
  author_association?: "COLLABORATOR" | "CONTRIBUTOR" | "FIRST_TIMER" | "FIRST_TIME_CONTRIBUTOR" | "MANNEQUIN" | "MEMBER" | "NONE" | "OWNER" | null;
  /** Contents of the issue comment */
  body?: string | null;
  body_html?: string | null;
  body_text?: string | null;
  created_at?: string | null;
  html_url?: string | null;
  /** Unique identifier of the issue comment */
  id?: number | null;
  issue_url?: string | null;
  /** Details about why an issue comment was minimized. */
  minimized?: { [key: string]: unknown } | null;
  node_id?: string | null;
  /** GitHub apps are a new way to extend GitHub. */
  performed_via_github_app?: { [key: string]: unknown } | null;
  /** Context around who pinned an issue comment and when it was pinned. */
  pin?: { [key: string]: unknown } | null;
  reactions?: { [key: string]: unknown } | null;
  updated_at?: string | null;
  /** URL for the issue comment */
  url?: string | null;
  /** A GitHub user. */
  user?: { [key: string]: unknown } | null;
};
type GithubPullsGetOutput = {
  _links?: { [key: string]: unknown } | null;
  active_lock_reason?: string | null;
  additions?: number | null;
  assignee?: { [key: string]: unknown } | null;
  assignees?: unknown[] | null;
  author_association?: "COLLABORATOR" | "CONTRIBUTOR" | "FIRST_TIMER" | "FIRST_TIME_CONTRIBUTOR" | "MANNEQUIN" | "MEMBER" | "NONE" | "OWNER" | null;
  auto_merge?: { [key: string]: unknown } | null;
  base?: { [key: string]: unknown } | null;
  body?: string | null;
  changed_files?: number | null;
  closed_at?: string | null;
  comments?: number | null;
  comments_url?: string | null;
  commits?: number | null;
  commits_url?: string | null;
  created_at?: string | null;
  deletions?: number | null;
  diff_url?: string | null;
  draft?: boolean | null;
  head?: { [key: string]: unknown } | null;
  html_url?: string | null;
  id?: number | null;
  issue_url?: string | null;
  labels?: unknown[] | null;
  locked?: boolean | null;
  maintainer_can_modify?: boolean | null;
  merge_commit_sha?: string | null;
  mergeable?: boolean | null;
  mergeable_state?: string | null;
  merged?: boolean | null;
  merged_at?: string | null;
  merged_by?: { [key: string]: unknown } | null;
  milestone?: { [key: string]: unknown } | null;
  node_id?: string | null;
  number?: number | null;
  patch_url?: string | null;
  rebaseable?: boolean | null;
  requested_reviewers?: unknown[] | null;
  requested_teams?: unknown[] | null;
  review_comment_url?: string | null;
  review_comments?: number | null;
  review_comments_url?: string | null;
  stack?: { [key: string]: unknown } | null;
  state?: "open" | "closed" | null;
  statuses_url?: string | null;
  title?: string | null;
  updated_at?: string | null;
  url?: string | null;
  user?: { [key: string]: unknown } | null;
};
type GithubReposGetOutput = {
  allow_auto_merge?: boolean | null;
  allow_forking?: boolean | null;
  allow_merge_commit?: boolean | null;
  allow_rebase_merge?: boolean | null;
  allow_squash_merge?: boolean | null;
  allow_update_branch?: boolean | null;
  anonymous_access_enabled?: boolean | null;
  archive_url?: string | null;
  archived?: boolean | null;
  assignees_url?: string | null;
  blobs_url?: string | null;
  branches_url?: string | null;
  clone_url?: string | null;
  code_of_conduct?: { [key: string]: unknown } | null;
  collaborators_url?: string | null;
  comments_url?: string | null;
  commits_url?: string | null;
  compare_url?: string | null;
  contents_url?: string | null;
  contributors_url?: string | null;
  created_at?: string | null;
  custom_properties?: { [key: string]: unknown } | null;
  default_branch?: string | null;
  delete_branch_on_merge?: boolean | null;
  deployments_url?: string | null;
  description?: string | null;
  disabled?: boolean | null;
  downloads_url?: string | null;
  events_url?: string | null;
  fork?: boolean | null;
  forks?: number | null;
  forks_count?: number | null;
  forks_url?: string | null;
  full_name?: string | null;
  git_commits_url?: string | null;
  git_refs_url?: string | null;
  git_tags_url?: string | null;
  git_url?: string | null;
  has_discussions?: boolean | null;
  has_downloads?: boolean | null;
  has_issues?: boolean | null;
  has_pages?: boolean | null;
  has_projects?: boolean | null;
  has_pull_requests?: boolean | null;
  has_wiki?: boolean | null;
  homepage?: string | null;
  hooks_url?: string | null;
  html_url?: string | null;
  id?: number | null;
  is_template?: boolean | null;
  issue_comment_url?: string | null;
  issue_events_url?: string | null;
  issues_url?: string | null;
  keys_url?: string | null;
  labels_url?: string | null;
  language?: string | null;
  languages_url?: string | null;
  license?: { [key: string]: unknown } | null;
  master_branch?: string | null;
  merge_commit_message?: "PR_BODY" | "PR_TITLE" | "BLANK" | null;
  merge_commit_title?: "PR_TITLE" | "MERGE_MESSAGE" | null;
  merges_url?: string | null;
  milestones_url?: string | null;
  mirror_url?: string | null;
  name?: string | null;
  network_count?: number | null;
  node_id?: string | null;
  notifications_url?: string | null;
  open_issues?: number | null;
  open_issues_count?: number | null;
  organization?: { [key: string]: unknown } | null;
  owner?: { [key: string]: unknown } | null;
  parent?: { [key: string]: unknown } | null;
  permissions?: { [key: string]: unknown } | null;
  private?: boolean | null;
  pull_request_creation_policy?: "all" | "collaborators_only" | null;
  pulls_url?: string | null;
  pushed_at?: string | null;
  releases_url?: string | null;
  security_and_analysis?: { [key: string]: unknown } | null;
  size?: number | null;
  source?: { [key: string]: unknown } | null;
  squash_merge_commit_message?: "PR_BODY" | "COMMIT_MESSAGES" | "BLANK" | null;
  squash_merge_commit_title?: "PR_TITLE" | "COMMIT_OR_PR_TITLE" | null;
  ssh_url?: string | null;
  stargazers_count?: number | null;
  stargazers_url?: string | null;
  statuses_url?: string | null;
  subscribers_count?: number | null;
  subscribers_url?: string | null;
  subscription_url?: string | null;
  svn_url?: string | null;
  tags_url?: string | null;
  teams_url?: string | null;
  temp_clone_token?: string | null;
  template_repository?: { [key: string]: unknown } | null;
  topics?: unknown[] | null;
  trees_url?: string | null;
  updated_at?: string | null;
  url?: string | null;
  use_squash_pr_title_as_default?: boolean | null;
  visibility?: string | null;
  watchers?: number | null;
  watchers_count?: number | null;
  web_commit_signoff_required?: boolean | null;
};
type GithubSearchIssuesAndPullRequestsOutput = {
  incomplete_results?: boolean | null;
  items?: unknown[] | null;
  /** When a semantic or hybrid search falls back to lexical search, this field contains the reasons for... */
  lexical_fallback_reason?: unknown[] | null;
  /** The type of search that was performed. */
  search_type?: "lexical" | "semantic" | "hybrid" | null;
  total_count?: number | null;
};

declare const everything: {
  /** Echoes back the input string */
  echo(input: { /** Message to echo */ message: string }): Promise<unknown>;
  /**
   * Demonstrates how annotations can be used to provide metadata about content.
   * Calls the backend tool "get-annotated-message".
   */
  get_annotated_message(input: {
    /** Type of message to demonstrate different annotation patterns */
    messageType: "error" | "success" | "debug";
    /**
     * Whether to include an example image
     * @default false
     */
    includeImage?: boolean;
  }): Promise<unknown>;
  /**
   * Returns all environment variables, helpful for debugging MCP server configuration
   * Calls the backend tool "get-env".
   */
  get_env(input?: {}): Promise<unknown>;
  /**
   * Returns up to ten resource links that reference different types of resources
   * Calls the backend tool "get-resource-links".
   */
  get_resource_links(input?: {
    /**
     * Number of resource links to return (1-10) (minimum: 1, maximum: 10)
     * @default 3
     */
    count?: number;
  }): Promise<unknown>;
  /**
   * Returns a resource reference that can be used by MCP clients
   * Calls the backend tool "get-resource-reference".
   */
  get_resource_reference(input?: {
    /** @default "Text" */
    resourceType?: "Text" | "Blob";
    /**
     * ID of the text resource to fetch
     * @default 1
     */
    resourceId?: number;
  }): Promise<unknown>;
  /**
   * Returns structured content along with an output schema for client data validation
   * Calls the backend tool "get-structured-content".
   */
  get_structured_content(input: { /** Choose city */ location: "New York" | "Chicago" | "Los Angeles" }): Promise<EverythingGetStructuredContentOutput>;
  /**
   * Returns the sum of two numbers
   * Calls the backend tool "get-sum".
   */
  get_sum(input: { /** First number */ a: number; /** Second number */ b: number }): Promise<unknown>;
  /**
   * Returns a tiny MCP logo image.
   * Calls the backend tool "get-tiny-image".
   */
  get_tiny_image(input?: {}): Promise<unknown>;
  /**
   * Compresses a single file using gzip compression. Depending upon the selected output type, returns either the compressed data as a gzipped resource or a resource link, allowing it to be downloaded in a subsequent request during the current session.
   * Calls the backend tool "gzip-file-as-resource".
   */
  gzip_file_as_resource(input?: {
    /**
     * Name of the output file
     * @default "README.md.gz"
     */
    name?: string;
    /**
     * URL or data URI of the file content to compress (format: uri)
     * @default "https://raw.githubusercontent.com/modelcontextprotocol/servers/refs/heads/main/README.md"
     */
    data?: string;
    /**
     * How the resulting gzipped file should be returned. 'resourceLink' returns a link to a resource that can be read later, 'resource' returns a full resource object.
     * @default "resourceLink"
     */
    outputType?: "resourceLink" | "resource";
  }): Promise<unknown>;
  /**
   * Toggles simulated, random-leveled logging on or off.
   * Calls the backend tool "toggle-simulated-logging".
   */
  toggle_simulated_logging(input?: {}): Promise<unknown>;
  /**
   * Toggles simulated resource subscription updates on or off.
   * Calls the backend tool "toggle-subscriber-updates".
   */
  toggle_subscriber_updates(input?: {}): Promise<unknown>;
  /**
   * Demonstrates a long running operation with progress updates.
   * Calls the backend tool "trigger-long-running-operation".
   */
  trigger_long_running_operation(input?: {
    /**
     * Duration of the operation in seconds
     * @default 10
     */
    duration?: number;
    /**
     * Number of steps in the operation
     * @default 5
     */
    steps?: number;
  }): Promise<unknown>;
  /**
   * Simulates a deep research operation that gathers, analyzes, and synthesizes information. Demonstrates MCP task-based operations with progress through multiple stages. If 'ambiguous' is true and client supports elicitation, sends an elicitation request for clarification.
   * Calls the backend tool "simulate-research-query".
   */
  simulate_research_query(input: {
    /** The research topic to investigate */
    topic: string;
    /**
     * Simulate an ambiguous query that requires clarification (triggers input_required status)
     * @default false
     */
    ambiguous?: boolean;
  }): Promise<unknown>;
};
type EverythingGetStructuredContentOutput = {
  /** Temperature in celsius */
  temperature: number;
  /** Weather conditions description */
  conditions: string;
  /** Humidity percentage */
  humidity: number;
};
