-- evoci's base tables: immutable, keyed facts that every metric view reads.
--
-- Writing the same fact twice is a no-op (inserts use ON CONFLICT DO NOTHING), so a run
-- that is killed and re-run never duplicates a row. Two tables carry *state* rather than
-- facts and are upserted: `tasks.status` (a task moves running → done / invalid /
-- infra_error) and `runs.finished_at`.
--
-- Vocabulary (one for all four protocols):
--   run        one execution of a benchmark with one configuration (`runs.config`)
--   task       one benchmark instance: SWE-CI task, SWE-EVO instance, NITR probe,
--              SWE-Bench-CL issue
--   iteration  SWE-CI CI iteration i (0 = the base codebase c0, before any agent);
--              NITR step k (1..n); SWE-Bench-CL memory stage i (0 = memory off);
--              SWE-EVO: 0 = the base, 1 = the agent's prediction
--   attempt    repeated attempts at the same (task, iteration); 0 unless a protocol
--              repeats (SWE-Bench-CL "share resolved" over several attempts)

-- One row per run.
create table if not exists runs (
    run_id          varchar primary key,
    protocol        varchar   not null,  -- 'swe-ci' | 'swe-evo' | 'nitr' | 'swe-bench-cl'
    dataset         varchar,             -- the dataset's name or path
    max_iterations  integer,             -- N: SWE-CI pads early stops to N; NULL where unused
    config_hash     varchar   not null,  -- identity of what the results depend on
    config          json      not null,  -- the full RunConfig
    created_at      timestamp not null,
    finished_at     timestamp,           -- NULL while running or after a crash
    dataset_tasks   integer              -- tasks the dataset holds, bad lines included (NULL: not known,
                                         -- e.g. one `evolve` flow run); the completeness denominator
);

-- One row per claimed run (task_id '') or task: the one live process that may write it
-- (evoci/store/lease.py). State, not a fact: taken, renewed and released in one transaction each;
-- a lease past `expires_at`, or whose owner on the same host is gone, may be taken over.
create table if not exists leases (
    run_id           varchar   not null,
    task_id          varchar   not null,  -- '' for the run as a whole
    owner            varchar   not null,  -- random token of the owning process
    host             varchar   not null,
    pid              integer   not null,
    process_started  timestamp,           -- the owner's start time: a reused pid is not its owner
    taken_at         timestamp not null,
    renewed_at       timestamp not null,  -- the owner's last heartbeat
    expires_at       timestamp not null,
    primary key (run_id, task_id)
);

-- One row per run × task. `status` is state, upserted as the task progresses.
create table if not exists tasks (
    run_id            varchar not null,
    task_id           varchar not null,
    protocol          varchar not null,
    repo              varchar,           -- as given in the dataset
    base_ref          varchar,
    oracle_ref        varchar,
    base_sha          varchar,           -- resolved commit of base_ref (NULL if it did not resolve)
    oracle_sha        varchar,
    environment_hash  varchar,           -- content hash of the test environment
    sequence_id       varchar,           -- SWE-Bench-CL: the sequence this issue belongs to
    sequence_position integer,           -- SWE-Bench-CL: 1-based position j in the sequence
    dimension         varchar,           -- NITR: primary dimension 'D1'..'D9'
    granularity       varchar,           -- NITR: 'micro' | 'multi-step'
    metadata          json,              -- protocol-specific extras
    status            varchar not null,  -- 'running' | 'done' | 'invalid' | 'infra_error' | 'environment_error' | 'input_error'
    reason            varchar,           -- why invalid / failed, in words a person can act on
    updated_at        timestamp not null,
    spec              json,              -- the task's spec as first recorded; a different spec under
                                         -- the same run id is refused, never merged (evoci/identity.py)
    primary key (run_id, task_id)
);

-- One row per run × task × test id of the target set, with the test's role.
-- SWE-CI: T = tests passing on the oracle c* (role 'target'); n(c*) = |T|.
-- SWE-EVO / SWE-Bench-CL: 'F2P' and 'P2P'. NITR: 'functional' and 'structural'.
create table if not exists targets (
    run_id   varchar not null,
    task_id  varchar not null,
    test_id  varchar not null,
    role     varchar not null,
    primary key (run_id, task_id, test_id)
);

-- One row per run × task × iteration × attempt whose test node finished.
-- An iteration that failed for infrastructure reasons has no row here (see `failures`).
create table if not exists iterations (
    run_id             varchar not null,
    task_id            varchar not null,
    iteration          integer not null,
    attempt            integer not null default 0,
    status             varchar not null,  -- test run: 'ok' | 'agent_error' | 'timeout'
                                          -- | 'build_error' (NITR) | 'no_prediction' | 'not_applied' (SWE-EVO)
    codebase_sha       varchar,           -- workspace commit that was tested
    architect_status   varchar,           -- AgentStatus of the architect (NULL at iteration 0)
    programmer_status  varchar,
    patch_applied      boolean,           -- SWE-EVO: the prediction applied cleanly to the base
    tampered_files     varchar[],         -- where the graded tree differs from what the agent left: test files the
                                          -- programmer changed (restored before committing), and conftest files,
                                          -- start-up hooks and package metadata the grading tree overrode
    discarded_files    varchar[],         -- files the architect changed besides requirement.xml (discarded)
    started_at         timestamp,
    finished_at        timestamp,
    wall_s             double,            -- whole iteration, harness included
    architect_s        double,
    programmer_s       double,
    test_s             double,            -- the test node's sandbox command
    integrity_flags    varchar[],         -- additions to the source that reach into the test framework
                                          -- (evoci.grading.sabotage): flagged for a person to read
    primary key (run_id, task_id, iteration, attempt)
);
-- Results files written before the column existed get it on first open.
alter table iterations add column if not exists integrity_flags varchar[];

-- One row per run × task × iteration × attempt × target test id.
-- outcome: pytest-json-report's 'passed' | 'failed' | 'error' | 'skipped' | 'xfailed' |
-- 'xpassed', or 'missing' (a target test absent from the report, e.g. after a
-- collection crash).
create table if not exists test_results (
    run_id      varchar not null,
    task_id     varchar not null,
    iteration   integer not null,
    attempt     integer not null default 0,
    test_id     varchar not null,
    outcome     varchar not null,
    primary key (run_id, task_id, iteration, attempt, test_id)
);

-- One row per model call an agent made (the replay agent records one zero-cost call per role).
-- Each call is written as soon as it is answered, keyed by the node execution that made it
-- (`node_run`, unique across flow runs, node retries and UI retries), so calls of a try that
-- failed or was killed are kept and never collide with a later try's: cost totals include
-- every call that was paid for.
create table if not exists agent_calls (
    run_id         varchar not null,
    task_id        varchar not null,
    iteration      integer not null,
    attempt        integer not null default 0,
    role           varchar not null,   -- 'architect' | 'programmer' | 'agent'
    node_run       varchar not null default '',  -- id of the node execution that made the call ('' before
                                                 -- evoci recorded it)
    node_try       integer not null default 1,  -- Prefect's run count of that node (for people; restarts at 1
                                                 -- in a new flow run)
    call_index     integer not null,   -- 0-based order within (iteration, role, node_run)
    model          varchar not null,
    provider       varchar not null,   -- 'openai' | 'anthropic' | 'openai-compatible' | 'replay' | 'command'
    input_tokens   bigint  not null default 0,  -- including cached input tokens
    output_tokens  bigint  not null default 0,
    cached_tokens  bigint  not null default 0,
    cost_usd       double  not null default 0,
    latency_s      double,
    finish_reason  varchar,
    error          varchar,            -- NULL when the call succeeded
    primary key (run_id, task_id, iteration, attempt, role, node_run, node_try, call_index)
);

-- One row per agent attempt: its outcome and full trajectory (messages and tool calls).
create table if not exists trajectories (
    run_id      varchar not null,
    task_id     varchar not null,
    iteration   integer not null,
    attempt     integer not null default 0,
    role        varchar not null,
    status      varchar not null,      -- AgentStatus
    message     varchar,
    seconds     double,
    trajectory  json,
    primary key (run_id, task_id, iteration, attempt, role)
);

-- Event log of failures that produced no score: infrastructure errors (each retry),
-- bad input, invalid tasks. A task whose retries were exhausted has tasks.status =
-- 'infra_error' and its score is NULL in every view.
create table if not exists failures (
    run_id       varchar not null,
    task_id      varchar not null,     -- '' for failures not tied to one task
    iteration    integer not null,     -- -1 when not tied to an iteration
    node         varchar not null,     -- 'dataset' | 'prepare' | 'architect' | 'programmer' | 'test' | ...
    kind         varchar not null,     -- 'infrastructure' | 'environment' | 'input' | 'invalid'
    error_type   varchar not null,     -- exception class name
    message      varchar not null,
    occurred_at  timestamp not null,
    primary key (run_id, task_id, iteration, node, kind, message)
);

-- One row per distribution that environment self-repair added to a task's environment
-- (SWE-CI curation step 3): the oracle's tests could not import `module`, so
-- `distribution` was added and the environment rebuilt. Bounded by the run's max_repairs.
create table if not exists environment_repairs (
    run_id            varchar not null,
    task_id           varchar not null,
    attempt           integer not null,   -- repair round, 1-based
    module            varchar not null,   -- the missing import
    distribution      varchar not null,   -- the requirement added
    environment_hash  varchar not null,   -- the environment after the round
    primary key (run_id, task_id, attempt, module)
);

-- One row per run × task × codebase measured for static code quality (evoci.swe_ci.quality):
-- the base (iteration 0), each iteration i ≥ 1 whose test node finished, and the oracle
-- (iteration -1). Written only when the run's config has `code_quality` on.
-- Files measured: Python files of the committed tree outside the tests folder and hidden
-- folders, read from the harness's own copy of the commit.
create table if not exists code_quality (
    run_id             varchar not null,
    task_id            varchar not null,
    iteration          integer not null,  -- 0 = base c0, i = the agent's code c_i, -1 = the oracle c*
    codebase           varchar not null,  -- 'base' | 'agent' | 'oracle'
    codebase_sha       varchar,           -- the commit measured
    files              integer not null,  -- Python files measured
    unparsable_files   integer not null,  -- files with a syntax error: left out of mi, cc_*, sloc
    sloc               integer not null,  -- radon's source lines of code
    mi                 double,            -- maintainability index 0..100 (radon, multi-line strings as
                                          -- comments), SLOC-weighted mean over files; NULL without code
    cc_mean            double,            -- mean cyclomatic complexity per block (function, method, class)
    cc_max             integer,
    blocks             integer not null,
    pylint_score       double,            -- pylint's global score 0..10 with evoci's pylintrc; NULL on error
    pylint_messages    json,              -- message type ('error', 'warning', 'refactor', 'convention',
                                          -- 'fatal', 'info') → count
    lines_added        integer not null,  -- against the base, over the same files (git diff counting)
    lines_deleted      integer not null,
    error              varchar,           -- why a measurement is NULL
    tools              varchar not null,  -- e.g. 'radon 6.0.1, pylint 3.3.9'
    primary key (run_id, task_id, iteration)
);

-- One row per curation run × candidate pair (SWE-CI §3.1): a maximal span of the first-parent
-- history whose dependency files do not change, from its first commit (base) to its last
-- (oracle). `status` is 'kept' (written to the dataset) or 'rejected', with `reason`:
-- 'single_commit', 'too_small' (changed non-test lines < the minimum), 'no_oracle_tests' (no
-- test passes on the oracle), 'small_gap' (n(c*) − n(c0) < the minimum), 'input_error'.
create table if not exists curation_pairs (
    run_id         varchar not null,   -- the curation run (`evoci curate`)
    repo           varchar not null,
    base_sha       varchar not null,
    oracle_sha     varchar not null,
    span_first     integer not null,   -- index of the base in the first-parent history (oldest = 0)
    span_last      integer not null,
    commits        integer not null,   -- commits in the span, base and oracle included
    changed_lines  integer not null,   -- lines added + deleted outside test files, base → oracle
    changed_files  integer not null,
    n_oracle       integer,            -- |T|: oracle tests passing on the oracle (NULL when not run)
    n_base         integer,            -- tests of T passing on the base with the oracle's tests
    gap            integer,            -- n_oracle − n_base
    status         varchar not null,   -- 'kept' | 'rejected'
    reason         varchar,            -- NULL when kept
    task_id        varchar,            -- the pair's task id in the written dataset
    recorded_at    timestamp not null,
    primary key (run_id, repo, base_sha, oracle_sha)
);

-- One row per graded SWE-bench-style prediction (SWE-EVO; shared with SWE-Bench-CL): what the
-- grader did besides running the tests. `overridden` also lands in iterations.tampered_files.
create table if not exists gradings (
    run_id         varchar not null,
    task_id        varchar not null,
    iteration      integer not null,
    attempt        integer not null default 0,
    status         varchar not null,   -- 'ok' | 'no_prediction' | 'not_applied' | 'timeout' | 'agent_error'
    apply_method   varchar,            -- 'git apply' | 'git apply -C1'; NULL when nothing applied
    overridden     varchar[],          -- the agent's paths grading restored or removed (test files, start-up hooks)
    collisions     json,               -- log-parser id → how many tests were truncated to it
    exit_code      integer,
    output_tail    varchar,
    primary key (run_id, task_id, iteration, attempt)
);

-- One row per run × task × judge model: the SWE-EVO failure-taxonomy label an LLM judge gave
-- an unresolved instance (arXiv 2512.18470, Appendix L). `label` is NULL when the judge gave
-- no valid label (`status` says why); the judge's calls are in agent_calls with role 'judge'.
create table if not exists failure_labels (
    run_id       varchar not null,
    task_id      varchar not null,
    judge_model  varchar not null,
    status       varchar not null,   -- 'ok' | 'invalid_output' | 'model_error'
    label        varchar,            -- one of the seven primary labels, or NULL
    reason       varchar,
    created_at   timestamp not null,
    primary key (run_id, task_id, judge_model)
);

-- Columns added after a results file was first made (old files gain them on the next write).
alter table runs add column if not exists dataset_tasks integer;
alter table tasks add column if not exists spec json;

-- SWE-Bench-CL semantic memory: one row per experience stored when an issue was processed
-- (arXiv 2507.00014 §5: problem, solution summary, outcome, rationale). `stage` = the issue's
-- sequence_position j: the experience belongs to memory M(j) and to every later M(i), i ≥ j.
-- Its vector is in cl_embeddings_<dim> (a FLOAT[dim] table per embedding size) under the same key.
create table if not exists cl_experiences (
    run_id            varchar not null,
    sequence_id       varchar not null,
    stage             integer not null,   -- j: first memory stage that holds this experience
    task_id           varchar not null,   -- the issue the experience is about
    problem           varchar not null,
    solution_summary  varchar not null,
    outcome           varchar not null,   -- 'resolved' | 'unresolved'
    rationale         varchar not null,
    tokens            integer not null,   -- estimated prompt tokens of the experience's text
    embedding_model   varchar not null,   -- e.g. 'hashing-256', 'wordllama-l2_supercat-256', 'openai:<model>'
    created_at        timestamp not null,
    primary key (run_id, sequence_id, task_id)
);

-- SWE-Bench-CL: which experiences were put into one attempt's prompt (rank 1 = most similar).
-- An attempt with no row here got no memory (memory off, stage 0, or nothing similar enough).
create table if not exists cl_retrievals (
    run_id            varchar not null,
    task_id           varchar not null,   -- the issue being attempted
    iteration         integer not null,   -- memory stage i
    attempt           integer not null,
    rank              integer not null,
    experience_task   varchar not null,   -- cl_experiences.task_id
    similarity        double not null,    -- array_cosine_similarity of the two embeddings
    seconds           double not null,    -- the retrieval's time (embedding the query + the search)
    primary key (run_id, task_id, iteration, attempt, rank)
);
-- A call whose price evoci does not know has cost NULL (unknown), never 0 (free).
alter table agent_calls alter column cost_usd drop not null;
alter table agent_calls alter column cost_usd drop default;
