# bash completion for kaicoder(1)                        -*- shell-script -*-
#
# Install as <datadir>/bash-completion/completions/kaicoder, or source it
# from ~/.bashrc. Needs nothing but bash itself; proposal and rollback ids
# come from `kaicoder --json list` and `kaicoder --json log` (read-only
# commands that take no lock), with a look at .kaicoder/ as a fallback.
# Completion never prints anything but candidates.
#
# shellcheck disable=SC2207  # COMPREPLY=($(compgen ...)) is the idiom here

_kaicoder_commands="init trust propose run list show approve reject apply log rollback read ls verify certify doctor"
_kaicoder_globals="--root --config --json --no-color --color --version --help -h"

# Options of each command; --help/-h come with the globals.
_kaicoder_command_options() {
    case $1 in
        init|trust) ;;
        propose)
            echo "--path --target --replacement --target-file --replacement-file" \
                "--content-file --delete --json-input --why --summary --agent" \
                "--dry-run --wait"
            ;;
        run) echo "--why --cwd --timeout --shell --agent --dry-run --wait" ;;
        list) echo "--status" ;;
        show) echo "--full --no-pager" ;;
        approve) echo "--no-apply --force" ;;
        reject) echo "--reason" ;;
        apply) echo "--force" ;;
        log) echo "-n --kind --file --full --no-pager" ;;
        rollback) echo "--force" ;;
        read) echo "--lines" ;;
        ls) echo "--glob" ;;
        verify) echo "--base --head --worktree" ;;
        certify) echo "--base --key --worktree" ;;
    esac
}

# The state dir of the tree being completed: --root if given, else the
# nearest folder upward holding kaicoder.toml, else one holding .git.
_kaicoder_state_dir() {
    local root=$1 d marker
    if [[ -z $root ]]; then
        for marker in kaicoder.toml .git; do
            d=$PWD
            while :; do
                if [[ -e $d/$marker ]]; then
                    root=$d
                    break 2
                fi
                [[ -z $d || $d == / ]] && break
                d=${d%/*}
            done
        done
    fi
    [[ -n $root ]] && printf '%s/.kaicoder' "${root%/}"
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

# Proposal ids; $1 = a status to keep, or empty for all.
_kaicoder_proposal_ids() {
    local status=$1 out ids=''
    if out=$(_kaicoder_query list ${status:+--status "$status"}); then
        # Pretty-printed JSON: ids of "proposals" sit six spaces deep; skip
        # the "corrupt" array, which has ids too.
        ids=$(printf '%s\n' "$out" | awk '
            /^  "corrupt": /   { skip = 1 }
            /^  "proposals": / { skip = 0 }
            !skip && /^      "id": [0-9]+/ { gsub(/[^0-9]/, ""); print }')
    fi
    if [[ -z $ids ]]; then
        local dir f
        dir=$(_kaicoder_state_dir "$_kaicoder_root") || return 0
        for f in "$dir"/staging/*/meta.json; do
            [[ -f $f ]] || continue
            if [[ -n $status ]] &&
                ! grep -q "^  \"status\": \"$status\"" "$f" 2>/dev/null; then
                continue
            fi
            f=${f%/meta.json}
            ids+="${f##*/} "
        done
    fi
    # Word splitting is wanted here: one id per line.
    # shellcheck disable=SC2086
    printf '%s\n' $ids
}

# Rollback ids, newest first, plus "last".
_kaicoder_rollback_ids() {
    local out ids=''
    if out=$(_kaicoder_query log -n 50); then
        ids=$(printf '%s\n' "$out" |
            sed -n 's/^ *"rollback_id": "\([0-9]\{8\}T[0-9]\{6\}Z[-0-9]*\)".*/\1/p')
    fi
    if [[ -z $ids ]]; then
        local dir f
        dir=$(_kaicoder_state_dir "$_kaicoder_root") || dir=
        if [[ -n $dir ]]; then
            for f in "$dir"/journal/*.json; do
                [[ -f $f ]] || continue
                f=${f##*/}
                ids+="${f%.json} "
            done
        fi
    fi
    # shellcheck disable=SC2086
    printf '%s\n' last $ids
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
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur"))
            return 0
            ;;
        --config | --path | --target-file | --replacement-file | --content-file | --file)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return 0
            ;;
        --color)
            COMPREPLY=($(compgen -W "auto always never" -- "$cur"))
            return 0
            ;;
        --status)
            COMPREPLY=($(compgen -W "pending approved applied rejected timeout failed rolled-back" -- "$cur"))
            return 0
            ;;
        --base | --head)
            COMPREPLY=($(compgen -W "HEAD $(git for-each-ref --format='%(refname:short)' refs/heads refs/remotes refs/tags 2>/dev/null)" -- "$cur"))
            return 0
            ;;
        --kind)
            COMPREPLY=($(compgen -W "edit write delete run rollback rejected timeout blocked failed" -- "$cur"))
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
                COMPREPLY=($(compgen -c -- "$cur"))
            else
                compopt -o filenames 2>/dev/null
                COMPREPLY=($(compgen -f -- "$cur"))
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
            COMPREPLY=($(compgen -W "$(_kaicoder_proposal_ids)" -- "$cur"))
            ;;
        approve | reject)
            COMPREPLY=($(compgen -W "$(_kaicoder_proposal_ids pending)" -- "$cur"))
            ;;
        rollback)
            COMPREPLY=($(compgen -W "$(_kaicoder_rollback_ids)" -- "$cur"))
            ;;
        read)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            ;;
        ls)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur"))
            ;;
    esac
    return 0
}

complete -F _kaicoder kaicoder
