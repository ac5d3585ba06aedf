# bash completion for kaicoder(1)                        -*- shell-script -*-
#
# Install as <datadir>/bash-completion/completions/kaicoder, or source it
# from ~/.bashrc. Needs nothing but bash itself; proposal and rollback ids
# come from `kaicoder --json list` and `kaicoder --json log` (read-only
# commands that take no lock and run no hook) and nothing else: names of
# files under .kaicoder/ are never offered, since a cloned repository picks
# them. Completion never evaluates a candidate and never prints anything but
# candidates.
#
# shellcheck disable=SC2207  # COMPREPLY=($(compgen -W CONSTANTS)) is safe

_kaicoder_commands="help init trust propose run wait list show approve reject apply log serve rollback read ls verify certify publish fetch hook integrate mcp intake agent-user doctor"
_kaicoder_globals="--root --config --json --no-color --color --version -v --help -h"

# Options of each command; --help/-h come with the globals.
_kaicoder_command_options() {
    case $1 in
        init|trust) ;;
        propose)
            echo "--path --target --replacement --target-file --replacement-file" \
                "--content-file --delete --replace-all --patch --json-input --why --summary --agent" \
                "--dry-run --wait --publish"
            ;;
        run) echo "--why --cwd --timeout --shell --agent --network --dry-run --wait" ;;
        wait) echo "--timeout" ;;
        list) echo "--status" ;;
        show) echo "--full --no-pager --file" ;;
        approve) echo "--no-apply --force" ;;
        reject) echo "--reason" ;;
        apply) echo "--force" ;;
        log) echo "-n --kind --file --full --no-pager" ;;
        rollback) echo "--force" ;;
        serve) echo "--port --address" ;;
        read) echo "--lines" ;;
        ls) echo "--glob" ;;
        verify) echo "--base --head --worktree" ;;
        certify) echo "--base --key --worktree" ;;
        fetch) echo "--prune" ;;
        integrate) echo "--check --user" ;;
        mcp) echo "--agent" ;;
        intake) echo "--watch --interval" ;;
        doctor) echo "--full" ;;
    esac
}

# Run kaicoder quietly with the --root/--config of the line being completed.
_kaicoder_query() {
    local bin=${_kaicoder_bin:-kaicoder}
    command -v -- "$bin" >/dev/null 2>&1 || return 1
    local -a cmd=("$bin")
    [[ -n $_kaicoder_root ]] && cmd+=(--root "$_kaicoder_root")
    [[ -n $_kaicoder_config ]] && cmd+=(--config "$_kaicoder_config")
    if command -v timeout >/dev/null 2>&1; then
        timeout 3 "${cmd[@]}" --json "$@" </dev/null 2>/dev/null
    else
        "${cmd[@]}" --json "$@" </dev/null 2>/dev/null
    fi
}

# Proposal ids; $1 = a status to keep, or empty for all. They come only
# from kaicoder's own JSON, never from names under .kaicoder/ (a cloned
# repository chooses those), one per line.
_kaicoder_proposal_ids() {
    local status=$1 out
    out=$(_kaicoder_query list ${status:+--status "$status"}) || return 0
    # Pretty-printed JSON: ids of "proposals" sit six spaces deep; skip the
    # "corrupt" array, which has ids too.
    printf '%s\n' "$out" | awk '
        /^  "corrupt": /   { skip = 1 }
        /^  "proposals": / { skip = 0 }
        !skip && /^      "id": [0-9]+,?$/ { gsub(/[^0-9]/, ""); print }'
}

# What rollback takes: "last", "last~1" ... (the entry N before the newest,
# as git's HEAD~N), the ids of applied proposals (their entries), and
# rollback ids, newest first; from `list` and `log` only, as above.
_kaicoder_rollback_ids() {
    local out
    printf '%s\n' last last~1 last~2 last~3
    _kaicoder_proposal_ids applied
    out=$(_kaicoder_query log -n 50) || return 0
    printf '%s\n' "$out" |
        sed -n 's/^ *"rollback_id": "\([0-9]\{8\}T[0-9]\{6\}Z[-0-9]*\)",\{0,1\}$/\1/p'
}

# Add each line of stdin that matches the extended regex $1 and starts with
# $cur to COMPREPLY, word for word. A candidate is never evaluated: no
# `compgen -W` (it expands $(...) and backticks in its words), no word
# splitting, no globbing. The regex is the last line of defence should the
# JSON above ever carry something else.
_kaicoder_add_matching() {
    local re=$1 line
    while IFS= read -r line; do
        [[ $line =~ $re ]] || continue
        [[ $line == "$cur"* ]] || continue
        COMPREPLY+=("$line")
    done
}

# Names of files (-f) or folders (-d) starting with $cur, one candidate per
# line as compgen prints them, without the globbing and word splitting of
# COMPREPLY=($(...)): a committed file named '*' stays '*'.
_kaicoder_add_files() {
    compopt -o filenames 2>/dev/null
    local line
    while IFS= read -r line; do
        COMPREPLY+=("$line")
    done < <(compgen "$1" -- "$cur")
}

_kaicoder() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    # bash splits "--opt=value" at the "=": treat it as "--opt value".
    if [[ $cur == = ]]; then
        cur=
    elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
        prev=${COMP_WORDS[COMP_CWORD - 2]}
    fi
    COMPREPLY=()

    # Find the command word, and the global --root/--config (before or
    # after it: kaicoder accepts both).
    local i w value command='' _kaicoder_root='' _kaicoder_config='' _kaicoder_bin=${COMP_WORDS[0]}
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        case $w in
            --root | --config | --color)
                # The value is the next word, or the one after a lone "=".
                [[ ${COMP_WORDS[i + 1]} == = ]] && ((i++))
                ((i + 1 < COMP_CWORD)) || break
                value=${COMP_WORDS[i + 1]}
                [[ $w == --root ]] && _kaicoder_root=$value
                [[ $w == --config ]] && _kaicoder_config=$value
                ((i++))
                ;;
            -*) ;;
            *) [[ -z $command ]] && command=$w ;;
        esac
    done
    # ~ in a typed --root is the shell's, not kaicoder's.
    _kaicoder_root=${_kaicoder_root/#\~/$HOME}
    _kaicoder_config=${_kaicoder_config/#\~/$HOME}

    # Values of options.
    case $prev in
        --root | --cwd)
            _kaicoder_add_files -d
            return 0
            ;;
        --config | --path | --target-file | --replacement-file | --content-file | --file | --patch)
            _kaicoder_add_files -f
            return 0
            ;;
        --color)
            COMPREPLY=($(compgen -W "auto always never" -- "$cur"))
            return 0
            ;;
        --status)
            COMPREPLY=($(compgen -W "pending approved applied rejected timeout failed rolled-back held" -- "$cur"))
            return 0
            ;;
        --base | --head)
            COMPREPLY=($(compgen -W "HEAD $(git for-each-ref --format='%(refname:short)' refs/heads refs/remotes refs/tags 2>/dev/null)" -- "$cur"))
            return 0
            ;;
        --kind)
            COMPREPLY=($(compgen -W "edit write delete changeset run rollback rejected timeout blocked failed" -- "$cur"))
            return 0
            ;;
        --target | --replacement | --why | --summary | --agent | --reason | -n | --lines | --glob | \
            --timeout | --shell)
            return 0
            ;;
    esac

    # kaicoder run ... -- CMD ARGS: a command, then whatever it takes.
    if [[ $command == run ]]; then
        local dashdash=0
        for ((i = 1; i < COMP_CWORD; i++)); do
            [[ ${COMP_WORDS[i]} == -- ]] && { dashdash=$i; break; }
        done
        if ((dashdash > 0)); then
            if ((COMP_CWORD == dashdash + 1)); then
                _kaicoder_add_files -c
            else
                _kaicoder_add_files -f
            fi
            return 0
        fi
    fi

    if [[ -z $command ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "$_kaicoder_globals" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$_kaicoder_commands" -- "$cur"))
        fi
        return 0
    fi

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_kaicoder_command_options "$command") $_kaicoder_globals" -- "$cur"))
        return 0
    fi

    case $command in
        show | apply)
            _kaicoder_add_matching '^[0-9]+$' < <(_kaicoder_proposal_ids)
            ;;
        approve | reject | wait | publish)
            _kaicoder_add_matching '^[0-9]+$' < <(_kaicoder_proposal_ids pending)
            ;;
        rollback)
            _kaicoder_add_matching '^(last(~[1-9][0-9]*)?|[0-9]{8}T[0-9]{6}Z(-[0-9]+)?|[1-9][0-9]*)$' \
                < <(_kaicoder_rollback_ids)
            ;;
        help)
            [[ $prev == help ]] && COMPREPLY=($(compgen -W "${_kaicoder_commands#help }" -- "$cur"))
            ;;
        read)
            _kaicoder_add_files -f
            ;;
        ls)
            _kaicoder_add_files -d
            ;;
        hook | integrate)
            COMPREPLY=($(compgen -W "claude-code codex gemini cursor" -- "$cur"))
            ;;
        agent-user)
            [[ $prev == agent-user ]] && COMPREPLY=($(compgen -W "setup check" -- "$cur"))
            ;;
    esac
    return 0
}

complete -F _kaicoder kaicoder
