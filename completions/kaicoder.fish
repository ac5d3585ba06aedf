# fish completion for kaicoder(1). Install in a folder on
# $fish_complete_path (for example vendor_completions.d). Proposal and
# rollback ids come from `kaicoder --json list` and `kaicoder --json log`
# (read-only: no lock, no hook) and nothing else, and only well-formed ones
# are offered; nothing but candidates is ever printed.

# The command word of the line being completed, skipping global options and
# their values; empty when there is none yet.
function __kaicoder_command
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l skip 0
    for t in $tokens
        if test $skip -eq 1
            set skip 0
            continue
        end
        switch $t
            case --root --config --color
                set skip 1
            case '-*'
            case '*'
                echo $t
                return 0
        end
    end
    return 1
end

function __kaicoder_needs_command
    not __kaicoder_command >/dev/null
end

function __kaicoder_using_command
    set -l c (__kaicoder_command)
    and contains -- $c $argv
end

# The value of a global option (--root, --config) on the line, if any.
function __kaicoder_global_value
    set -l tokens (commandline -opc)
    set -l n (count $tokens)
    for i in (seq $n)
        set -l t $tokens[$i]
        if test "$t" = $argv[1]; and test $i -lt $n
            set -l next (math $i + 1)
            echo $tokens[$next]
            return 0
        end
        if string match -q -- "$argv[1]=*" $t
            string replace -- "$argv[1]=" '' $t
            return 0
        end
    end
    return 1
end

# Run kaicoder quietly with the --root/--config of the line being completed.
function __kaicoder_query
    command -sq kaicoder; or return 1
    set -l cmd kaicoder
    set -l root (__kaicoder_global_value --root)
    set -l config (__kaicoder_global_value --config)
    test -n "$root"; and set -a cmd --root $root
    test -n "$config"; and set -a cmd --config $config
    if command -sq timeout
        timeout 3 $cmd --json $argv </dev/null 2>/dev/null
    else
        $cmd --json $argv </dev/null 2>/dev/null
    end
end

# Proposal ids; $argv[1] = a status to keep, or none for all. Ids come only
# from kaicoder's own JSON, never from names under .kaicoder/ (a cloned
# repository picks those), and only well-formed ones are printed.
function __kaicoder_proposal_ids
    set -l st $argv[1]
    if test -n "$st"
        __kaicoder_query list --status $st | __kaicoder_json_ids
    else
        __kaicoder_query list | __kaicoder_json_ids
    end | string match -r -- '^[0-9]+$'
end

# Ids of the "proposals" array of pretty-printed `list` JSON; the "corrupt"
# array has ids too and is skipped.
function __kaicoder_json_ids
    awk '
        /^  "corrupt": /   { skip = 1 }
        /^  "proposals": / { skip = 0 }
        !skip && /^      "id": [0-9]+,?$/ { gsub(/[^0-9]/, ""); print }'
end

# What rollback takes: "last", "last~1" ... (the entry N before the newest,
# as git's HEAD~N), the ids of applied proposals (their entries), and
# rollback ids, newest first; from `list` and `log` only, as above.
function __kaicoder_rollback_ids
    printf '%s\n' last last~1 last~2 last~3
    __kaicoder_proposal_ids applied
    __kaicoder_query log -n 50 |
        string replace -rf '^ *"rollback_id": "([0-9]{8}T[0-9]{6}Z[-0-9]*)",?$' '$1' |
        string match -r -- '^[0-9]{8}T[0-9]{6}Z(?:-[0-9]+)?$'
end

complete -c kaicoder -f

# Global options.
complete -c kaicoder -l root -x -a '(__fish_complete_directories)' -d 'A trusted root to work in'
complete -c kaicoder -l config -r -F -d 'Extra config that may only add restrictions'
complete -c kaicoder -l json -d 'Print one JSON object on stdout'
complete -c kaicoder -l no-color -d 'Never colour output'
complete -c kaicoder -l color -x -a 'auto always never' -d 'Colour output'
complete -c kaicoder -n __kaicoder_needs_command -s v -l version -d 'Print the version and exit'
complete -c kaicoder -s h -l help -d 'Print help and exit'

# Commands.
complete -c kaicoder -n __kaicoder_needs_command -a help -d 'Explain a command: kaicoder help COMMAND is kaicoder COMMAND --help'
complete -c kaicoder -n __kaicoder_needs_command -a init -d 'At a terminal: write kaicoder.toml and the state folder, trust the root'
complete -c kaicoder -n __kaicoder_needs_command -a trust -d 'At a terminal: trust the kaicoder.toml of a root'
complete -c kaicoder -n __kaicoder_needs_command -a propose -d 'Stage a file change for a human to approve'
complete -c kaicoder -n __kaicoder_needs_command -a run -d 'Stage a shell command for a human to approve'
complete -c kaicoder -n __kaicoder_needs_command -a wait -d 'Block until a proposal is decided and report its outcome'
complete -c kaicoder -n __kaicoder_needs_command -a list -d 'List proposals, pending first'
complete -c kaicoder -n __kaicoder_needs_command -a show -d 'Show one proposal with its diff'
complete -c kaicoder -n __kaicoder_needs_command -a approve -d 'Review, approve and apply a proposal'
complete -c kaicoder -n __kaicoder_needs_command -a reject -d 'Turn a proposal down; nothing is written'
complete -c kaicoder -n __kaicoder_needs_command -a apply -d 'Apply an approved proposal'
complete -c kaicoder -n __kaicoder_needs_command -a log -d 'Changelog entries, newest first'
complete -c kaicoder -n __kaicoder_needs_command -a serve -d 'At a terminal: the local review page, the same gate in a browser'
complete -c kaicoder -n __kaicoder_needs_command -a rollback -d 'Undo a changelog entry from its backup'
complete -c kaicoder -n __kaicoder_needs_command -a read -d 'Read a file for an agent: confined, secrets refused, redacted'
complete -c kaicoder -n __kaicoder_needs_command -a ls -d 'List a folder for an agent, confined to root'
complete -c kaicoder -n __kaicoder_needs_command -a verify -d 'Check that certified paths changed only with signed approvals'
complete -c kaicoder -n __kaicoder_needs_command -a certify -d 'Sign an approval of the changes to certified paths'
complete -c kaicoder -n __kaicoder_needs_command -a publish -d 'Team mode: push a proposal to the team remote'
complete -c kaicoder -n __kaicoder_needs_command -a fetch -d "Team mode: bring the team remote's proposals and decisions"
complete -c kaicoder -n __kaicoder_needs_command -a hook -d "An agent harness's pre-tool hook; fails closed"
complete -c kaicoder -n __kaicoder_needs_command -a integrate -d 'At a terminal: wire an agent harness to write only through kaicoder'
complete -c kaicoder -n __kaicoder_needs_command -a mcp -d 'Serve the Model Context Protocol on stdio: reads, proposals and waits as tools'

complete -c kaicoder -n __kaicoder_needs_command -a intake -d "Two-user mode: take the agent's spooled proposals in"
complete -c kaicoder -n __kaicoder_needs_command -a agent-user -d "Two-user mode: set the agent's own Unix user up (as root) or check it"
complete -c kaicoder -n __kaicoder_needs_command -a doctor -d 'Check config, store, changelog, backups, guardrails and installation'

# propose
set -l p '__kaicoder_using_command propose'
complete -c kaicoder -n $p -l path -r -F -d 'File to change'
complete -c kaicoder -n $p -l target -x -d 'Exact text to replace; must occur exactly once'
complete -c kaicoder -n $p -l replacement -x -d 'Text to put in its place'
complete -c kaicoder -n $p -l target-file -r -F -d "Read the target from a file ('-' = stdin)"
complete -c kaicoder -n $p -l replacement-file -r -F -d "Read the replacement from a file ('-' = stdin)"
complete -c kaicoder -n $p -l content-file -r -F -d "Whole new content of the file ('-' = stdin)"
complete -c kaicoder -n $p -l delete -d 'Remove the file'
complete -c kaicoder -n $p -l replace-all -d 'Replace every occurrence of the target (their count is recorded)'
complete -c kaicoder -n $p -l patch -r -F -d "A changeset: a unified diff or a *** Begin Patch envelope ('-' = stdin)"
complete -c kaicoder -n $p -l json-input -d 'Read one request object from stdin'
complete -c kaicoder -n $p -l why -x -d 'Why the change is needed'
complete -c kaicoder -n $p -l summary -x -d 'One-line summary for the changelog'
complete -c kaicoder -n $p -l agent -x -d 'Name of the proposing agent'
complete -c kaicoder -n $p -l dry-run -d 'Print the diff and the decision; stage nothing'
complete -c kaicoder -n $p -l wait -d 'Block until the proposal is decided'
complete -c kaicoder -n $p -l publish -d 'Team mode: publish it to the team remote at once'

# run: options before "--", then a command and its arguments
function __kaicoder_run_part
    set -l tokens (commandline -opc)
    set -l i (contains -i -- -- $tokens)
    or begin
        echo options
        return
    end
    if test (count $tokens) -eq $i
        echo command
    else
        echo args
    end
end
set -l r '__kaicoder_using_command run; and test (__kaicoder_run_part) = options'
complete -c kaicoder -n $r -l why -x -d 'Why the command is needed'
complete -c kaicoder -n $r -l cwd -x -a '(__fish_complete_directories)' -d 'Folder to run in, inside root'
complete -c kaicoder -n $r -l timeout -x -d "Seconds before the command's process group is killed"
complete -c kaicoder -n $r -l shell -x -d 'A shell string, run with /bin/sh -c once every part is judged'
complete -c kaicoder -n $r -l agent -x -d 'Name of the proposing agent'
complete -c kaicoder -n $r -l network -d 'Ask for network access for this run (confirm tier)'
complete -c kaicoder -n $r -l dry-run -d 'Print the verdict; stage nothing'
complete -c kaicoder -n $r -l wait -d 'Block until decided and run; exit with its code'
complete -c kaicoder -n '__kaicoder_using_command run; and test (__kaicoder_run_part) = command' -a '(__fish_complete_command)'
complete -c kaicoder -n '__kaicoder_using_command run; and test (__kaicoder_run_part) = args' -F

# list
complete -c kaicoder -n '__kaicoder_using_command list' -l status -x \
    -a 'pending approved applied rejected timeout failed rolled-back held' -d 'Only proposals with this status'

# show
complete -c kaicoder -n '__kaicoder_using_command show' -l full -d 'The whole diff, however large'
complete -c kaicoder -n '__kaicoder_using_command show' -l no-pager -d 'Never page the output'
complete -c kaicoder -n '__kaicoder_using_command show' -l file -r -F -d 'A changeset: the diff of this one file'
complete -c kaicoder -n '__kaicoder_using_command show apply' -a '(__kaicoder_proposal_ids)' -d Proposal

# approve
complete -c kaicoder -n '__kaicoder_using_command approve' -l no-apply -d "Record the approval; apply later with 'kaicoder apply'"
complete -c kaicoder -n '__kaicoder_using_command approve' -l force -d 'Apply even though its validation failed (asks for CONFIRM)'
complete -c kaicoder -n '__kaicoder_using_command apply' -l force -d 'Apply even though its validation failed'
complete -c kaicoder -n '__kaicoder_using_command approve reject wait publish' -a '(__kaicoder_proposal_ids pending)' -d 'Pending proposal'

# wait
complete -c kaicoder -n '__kaicoder_using_command wait' -l timeout -x -d 'Give up after this many seconds; exit 8 if still undecided'

# hook, integrate
complete -c kaicoder -n '__kaicoder_using_command hook integrate' -a 'claude-code codex gemini cursor' -d Harness
complete -c kaicoder -n '__kaicoder_using_command integrate' -l check -d 'Only report what is not wired yet (exit 6 when missing)'
complete -c kaicoder -n '__kaicoder_using_command integrate' -l user -d "Wire the harness's user-level settings instead"
# serve
complete -c kaicoder -n '__kaicoder_using_command serve' -l port -x -d 'Port on 127.0.0.1 (default: a free one)'
complete -c kaicoder -n '__kaicoder_using_command serve' -l address -x -a '127.0.0.1 localhost' -d 'Address to listen on: only 127.0.0.1'

# reject
complete -c kaicoder -n '__kaicoder_using_command reject' -l reason -x -d 'Why, for the agent and the changelog'

# log
complete -c kaicoder -n '__kaicoder_using_command log' -s n -x -d 'How many entries (0 = all)'
complete -c kaicoder -n '__kaicoder_using_command log' -l kind -x \
    -a 'edit write delete changeset run rollback rejected timeout blocked failed' -d 'Only entries of this kind'
complete -c kaicoder -n '__kaicoder_using_command log' -l file -r -F -d 'Only entries that touched this file'
complete -c kaicoder -n '__kaicoder_using_command log' -l full -d 'Print the entries as markdown'
complete -c kaicoder -n '__kaicoder_using_command log' -l no-pager -d 'Never page the output'

# rollback
complete -c kaicoder -n '__kaicoder_using_command rollback' -l force -d 'Roll back even though the file changed since'
complete -c kaicoder -n '__kaicoder_using_command rollback' -a '(__kaicoder_rollback_ids)' -d 'Entry: rollback id, last~N or proposal id'

# help COMMAND
complete -c kaicoder -n '__kaicoder_using_command help' -a 'init trust propose run wait list show approve reject apply log serve rollback read ls verify certify hook integrate mcp intake agent-user doctor' -d Command

# read
complete -c kaicoder -n '__kaicoder_using_command read' -l lines -x -d "Only lines A:B (1-based, inclusive; 'A:' to the end)"
complete -c kaicoder -n '__kaicoder_using_command read' -F -d File

# ls
complete -c kaicoder -n '__kaicoder_using_command ls' -l glob -x -d 'Every path beneath the folder matching this pattern'
complete -c kaicoder -n '__kaicoder_using_command ls' -a '(__fish_complete_directories)'

# verify
function __kaicoder_revisions
    echo HEAD
    git for-each-ref --format='%(refname:short)' refs/heads refs/remotes refs/tags 2>/dev/null
end
set -l v '__kaicoder_using_command verify'
complete -c kaicoder -n $v -l base -x -a '(__kaicoder_revisions)' -d 'Commit, tag or branch to count changes from'
complete -c kaicoder -n $v -l head -x -a '(__kaicoder_revisions)' -d 'Commit, tag or branch to certify (default HEAD)'
complete -c kaicoder -n $v -l worktree -d 'Certify the work tree, uncommitted changes included'

# certify
set -l c '__kaicoder_using_command certify'
complete -c kaicoder -n $c -l base -x -a '(__kaicoder_revisions)' -d 'Commit, tag or branch to count changes from'
complete -c kaicoder -n $c -l key -r -F -d 'SSH key to sign with (default: git user.signingkey, else ~/.ssh/id_ed25519)'
complete -c kaicoder -n $c -l worktree -d 'Also sign uncommitted changes in the work tree'

# fetch
complete -c kaicoder -n '__kaicoder_using_command fetch' -l prune -d 'Also drop the refs of settled proposals past [team] keep'

# mcp
complete -c kaicoder -n '__kaicoder_using_command mcp' -l agent -x -d 'Name recorded as proposed-by'

# intake
complete -c kaicoder -n '__kaicoder_using_command intake' -l watch -d 'Keep taking entries in as they arrive, until interrupted'
complete -c kaicoder -n '__kaicoder_using_command intake' -l interval -x -d 'Seconds between looks at the spool with --watch'
complete -c kaicoder -n '__kaicoder_using_command doctor' -l full -d 'Read every record, also archive folders unchanged since the last doctor'

# agent-user
complete -c kaicoder -n '__kaicoder_using_command agent-user' -a 'setup check' -d 'Two-user mode action'
