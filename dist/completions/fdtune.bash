# bash completion for fdtune (installed as share/bash-completion/completions/fdtune): the
# commands, each command's options (as its --help lists them; tests/test_install.sh checks),
# and the values of --op, --precision, --strategy, --format, --target, --gpu (auto, all and
# the GPU catalogue's names and aliases, read from the
# first gpus.lua of $FDTUNE_RECIPES, else the one installed beside fdtune).
# --target offers the architectures fdtune has facts for (runtime/arch.c), sm_86 and sm_89 (the
# sm_80 facts; NVRTC 12 and 13 compile both) and gfx940 (the MI300 instruction set clang-16
# knows); `fdtune gen --target` refuses what this build's compiler does not take (NVRTC 13 no
# longer takes sm_70) and names what it does.

_fdtune_gpus() {
    local bin cat="" d
    bin=$(command -v fdtune 2>/dev/null) && [ -r "$(dirname "$bin")/../share/fdtune/recipes/gpus.lua" ] &&
        cat="$(dirname "$bin")/../share/fdtune/recipes/gpus.lua"
    local IFS=:
    for d in ${FDTUNE_RECIPES:-}; do
        [ -r "$d/gpus.lua" ] && cat="$d/gpus.lua" && break
    done
    [ -n "$cat" ] || return
    # every quoted string on the catalogue's name lines; spaces become '-' (names compare on
    # letters and digits only, so "H100 SXM" and "H100-SXM" are one GPU)
    sed -n 's/^ *name *= *//p' "$cat" | grep -o '"[^"]*"' | tr -d '"' | tr ' ' '-' | sort -u
}

_fdtune_options() { # COMMAND [SUBCOMMAND]
    case $1 in
    tune) echo "--gpu --cpu --devices --R --grid --op --absorb --precision --recipe --strategy --budget --time
        --force --cold --search-all --stop-within --stop-after --seed --jobs --timeout --db --dry-run --replay --top --json --export-json --export-csv --tasks --task
        --results --simulate-from --simulate-gpus --help" ;;
    query)
        case $2 in
        best) echo "--gpu --cpu --op --absorb --R --grid --precision --nearest --db --no-system-db --json --csv --export-json --export-csv --help" ;;
        runs) echo "--gpu --cpu --limit --db --no-system-db --json --csv --export-json --export-csv --help" ;;
        history) echo "--op --absorb --R --grid --config --precision --gpu --cpu --db --no-system-db --json --csv --export-json --export-csv --help" ;;
        show) echo "--db --no-system-db --json --csv --export-json --export-csv --help" ;;
        *) echo "--db --gpu --no-system-db --json --csv --export-json --export-csv --help" ;;
        esac ;;
    export) echo "--gpu --cpu --op --absorb --R --precision --grid --db --no-system-db -o --format --driver --help" ;;
    plan) echo "--op --absorb --R --precision --grid --strategy --budget --time --seed --recipe -o --help" ;;
    retune) echo "--gpu --cpu --op --absorb --since --regression --budget --strategy --jobs --timeout --db --json
        --force-env-change --help" ;;
    gen) echo "--op --absorb --R --precision --grid --config --name --compile --target --disasm
        --runtime-dims --help" ;;
    bench) echo "--op --absorb --R --grid --precision --config --device --cpu --seed --probe --timeout --json --export-json --export-csv --hybrid --reflection --gpu --steps --warmup --fraction --config-gpu --config-cpu --share --widths --db --help" ;;
    devices) echo "--json --no-bandwidth --db --help" ;;
    hybrid) echo "--gpu --cpu --op --R --precision --grid --absorb --db --predict --json --help" ;;
    db)
        case $2 in
        merge) echo "-o --best-only --drop-stale --meta --json --help" ;;
        check) echo "--json --help" ;;
        *) echo "--help" ;;
        esac ;;
    esac
}

_fdtune() {
    local cur prev cmd="" sub="" list="" comma=""
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=""
    [ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
    local commands="tune query export plan retune gen bench devices db hybrid help"
    if [ "$COMP_CWORD" -le 1 ]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--help --version $(_fdtune_options tune)" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        fi
        return
    fi
    case ${COMP_WORDS[1]} in
    -*) cmd=tune ;;
    help) COMPREPLY=($(compgen -W "$commands" -- "$cur")); return ;;
    *) cmd=${COMP_WORDS[1]} ;;
    esac
    if [ "$cmd" = query ] || [ "$cmd" = db ] || [ "$cmd" = hybrid ]; then
        if [ "$COMP_CWORD" -eq 2 ]; then
            case $cmd in
            query) COMPREPLY=($(compgen -W "best runs history show" -- "$cur")) ;;
            db) COMPREPLY=($(compgen -W "merge check" -- "$cur")) ;;
            hybrid) COMPREPLY=($(compgen -W "plan" -- "$cur")) ;;
            esac
            return
        fi
        sub=${COMP_WORDS[2]}
    fi
    # the value of the option before the cursor; lists complete after their last comma
    case $prev in
    --op) list="d2x d2y d2z lap wave dwave" ;;
    --precision) list="f32 f64" ;;
    --strategy) list="exhaustive random model" ;;
    --format) list="header json" ;;
    --predict) COMPREPLY=($(compgen -W "MI300A GH200" -- "$cur")); return ;;
    --target) list="sm_80 sm_86 sm_89 sm_90 gfx906 gfx908 gfx90a gfx940 gfx942 gfx1030 gfx1100" ;;
    --gpu) COMPREPLY=($(compgen -W "auto all $(_fdtune_gpus)" -- "$cur")); return ;;
    --cpu) COMPREPLY=($(compgen -W "auto" -- "$cur")); return ;;
    --db | --replay | --simulate-from | --recipe | --tasks | -o)
        COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --results) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --R | --grid | --absorb | --budget | --time | --seed | --jobs | --timeout | --top | --task | \
    --simulate-gpus | --devices | --since | --regression | --config | --name | --device | \
    --limit | --meta)
        return ;;
    esac
    if [ -n "$list" ]; then
        if [[ $cur == *,* ]]; then
            comma=${cur%,*},
        fi
        COMPREPLY=($(compgen -P "$comma" -W "$list" -- "${cur##*,}"))
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_fdtune_options "$cmd" "$sub")" -- "$cur"))
    elif [ "$cmd" = db ]; then
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -F _fdtune fdtune
