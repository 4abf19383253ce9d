# fish completion for fdtune (installed as share/fish/vendor_completions.d/fdtune.fish): the
# commands, each command's options (as its --help lists them; tests/test_install.sh checks)
# and the values of --op, --precision, --strategy, --format and --gpu (auto, all and the GPU
# catalogue's names, read from the installed recipes/gpus.lua beside fdtune).
# --target offers the architectures fdtune has facts for (runtime/arch.c), sm_86 and sm_89 (the
# sm_80 facts; NVRTC 12 and 13 compile both) and gfx940 (the MI300 instruction set clang-16
# knows); `fdtune gen --target` refuses what this build's compiler does not take (NVRTC 13 no
# longer takes sm_70) and names what it does.

function __fdtune_gpus
    echo auto
    echo all
    set -l bin (command -v fdtune); or return
    set -l cat (dirname $bin)/../share/fdtune/recipes/gpus.lua
    test -r $cat; or return
    sed -n 's/^ *name *= *//p' $cat | grep -o '"[^"]*"' | tr -d '"' | tr ' ' '-' | sort -u
end

set -l cmds tune query export plan retune gen bench devices db hybrid help
complete -c fdtune -f
complete -c fdtune -n "not __fish_seen_subcommand_from $cmds" -a tune -d 'search the best configs of problems on a GPU'
complete -c fdtune -n "not __fish_seen_subcommand_from $cmds" -a query -d 'best configs, runs, history of the database'
complete -c fdtune -n "not __fish_seen_subcommand_from $cmds" -a export -d 'write a tuned header (or JSON)'
complete -c fdtune -n "not __fish_seen_subcommand_from $cmds" -a plan -d 'tasks for a job array'
complete -c fdtune -n "not __fish_seen_subcommand_from $cmds" -a retune -d 're-measure stored bests, re-search'
complete -c fdtune -n "not __fish_seen_subcommand_from $cmds" -a gen -d 'HIP source of one candidate'
complete -c fdtune -n "not __fish_seen_subcommand_from $cmds" -a bench -d 'run, verify and time candidates'
complete -c fdtune -n "not __fish_seen_subcommand_from $cmds" -a devices -d 'list the visible GPUs'
complete -c fdtune -n "not __fish_seen_subcommand_from $cmds" -a db -d 'merge databases, check one'
complete -c fdtune -n "not __fish_seen_subcommand_from $cmds" -a hybrid -d 'plan a step on GPU and CPU'
complete -c fdtune -n "not __fish_seen_subcommand_from $cmds" -a help -d usage
complete -c fdtune -n "not __fish_seen_subcommand_from $cmds" -l version -d 'version and backends'
complete -c fdtune -l help -d usage

# __fdtune_in COMMANDS...: the command line is one of these commands (tune also without one)
function __fdtune_in
    set -l cmds tune query export plan retune gen bench devices db hybrid help
    for c in $argv
        if test $c = tune; and not __fish_seen_subcommand_from $cmds
            return 0
        end
        __fish_seen_subcommand_from $c; and return 0
    end
    return 1
end

# values
complete -c fdtune -n '__fdtune_in tune query export plan retune gen bench' -l op -x -a 'd2x d2y d2z lap wave dwave' -d operator
complete -c fdtune -n '__fdtune_in tune query export plan retune gen bench' -l absorb -x -d 'dwave: absorbing layer W or W:S'
complete -c fdtune -n '__fdtune_in tune query export plan gen bench' -l precision -x -a 'f32 f64 f32,f64' -d precision
complete -c fdtune -n '__fdtune_in tune query export retune' -l gpu -x -a '(__fdtune_gpus)' -d GPU
complete -c fdtune -n '__fdtune_in tune query export retune bench' -l cpu -x -a auto -d 'the host CPU'
complete -c fdtune -n '__fdtune_in tune plan retune' -l strategy -x -a 'exhaustive random model' -d strategy
complete -c fdtune -n '__fdtune_in export' -l format -x -a 'header json' -d format
complete -c fdtune -n '__fdtune_in export' -l driver -d 'a time-step driver after the header'
complete -c fdtune -n '__fdtune_in gen' -l target -x -a 'sm_80 sm_86 sm_89 sm_90 gfx906 gfx908 gfx90a gfx940 gfx942 gfx1030 gfx1100' -d architecture
complete -c fdtune -n '__fdtune_in tune query export plan gen bench' -l R -x -d 'radius 1..8'
complete -c fdtune -n '__fdtune_in tune query export plan gen bench' -l grid -x -d 'N^3 or NXxNYxNZ'
complete -c fdtune -n '__fdtune_in tune query export retune' -l db -r -F -d 'tuning database'
complete -c fdtune -n '__fdtune_in query export' -l no-system-db -d 'leave out the system database'
complete -c fdtune -n '__fdtune_in export plan db' -s o -r -F -d 'output file'
complete -c fdtune -n '__fdtune_in tune query retune bench devices db' -l json -d JSON
complete -c fdtune -n '__fdtune_in tune query bench' -l export-json -r -F -d 'also write JSON to FILE'
complete -c fdtune -n '__fdtune_in tune query bench' -l export-csv -r -F -d 'also write CSV to FILE'
complete -c fdtune -n '__fdtune_in query' -l csv -d CSV
# tune
complete -c fdtune -n '__fdtune_in tune' -l devices -x -d 'visible GPUs by index'
complete -c fdtune -n '__fdtune_in tune' -l force -d 'measure again'
complete -c fdtune -n '__fdtune_in tune' -l search-all -d 'spend the whole budget'
complete -c fdtune -n '__fdtune_in tune' -l cold -d 'measure nothing known first'
complete -c fdtune -n '__fdtune_in tune' -l stop-within -x -d 'stop within P% of the limit'
complete -c fdtune -n '__fdtune_in tune' -l stop-after -x -d 'stop after K evaluations without gain'
complete -c fdtune -n '__fdtune_in tune' -l dry-run -d 'no GPU: space and ranking'
complete -c fdtune -n '__fdtune_in tune' -l replay -r -F -d 'replay strategies against DB'
complete -c fdtune -n '__fdtune_in tune' -l top -x -d 'ranking rows'
complete -c fdtune -n '__fdtune_in tune' -l tasks -r -F -d 'a plan of tasks'
complete -c fdtune -n '__fdtune_in tune' -l task -x -d 'task index'
complete -c fdtune -n '__fdtune_in tune' -l results -x -a '(__fish_complete_directories)' -d 'where shards go'
complete -c fdtune -n '__fdtune_in tune' -l simulate-from -r -F -d 'simulated GPUs answer from DB'
complete -c fdtune -n '__fdtune_in tune' -l simulate-gpus -x -d 'GPUs of the simulated node'
complete -c fdtune -n '__fdtune_in tune plan retune' -l budget -x -d evaluations
complete -c fdtune -n '__fdtune_in tune plan' -l time -x -d 'time limit'
complete -c fdtune -n '__fdtune_in tune plan bench' -l seed -x -d seed
complete -c fdtune -n '__fdtune_in tune plan' -l recipe -r -F -d 'a recipe of your own'
complete -c fdtune -n '__fdtune_in tune retune' -l jobs -x -d 'parallel compilations'
complete -c fdtune -n '__fdtune_in tune retune bench' -l timeout -x -d 'seconds per candidate'
# query
complete -c fdtune -n '__fdtune_in query; and not __fish_seen_subcommand_from best runs history show' -a 'best runs history show'
complete -c fdtune -n '__fdtune_in query' -l nearest -d 'answer for an untuned problem'
complete -c fdtune -n '__fdtune_in query' -l limit -x -d rows
complete -c fdtune -n '__fdtune_in query gen bench' -l config -x -d 'KEY=VAL,...'
# retune
complete -c fdtune -n '__fdtune_in retune' -l since -x -d 'only problems run in the last T'
complete -c fdtune -n '__fdtune_in retune' -l regression -x -d 'threshold in percent'
complete -c fdtune -n '__fdtune_in retune' -l force-env-change -d 'test flag'
# gen
complete -c fdtune -n '__fdtune_in gen' -l name -x -d 'kernel name'
complete -c fdtune -n '__fdtune_in gen' -l compile -d 'compile and report resources'
complete -c fdtune -n '__fdtune_in gen' -l disasm -d 'append the disassembly'
complete -c fdtune -n '__fdtune_in gen' -l runtime-dims -d 'grid as kernel arguments'
# bench, devices
complete -c fdtune -n '__fdtune_in bench' -l device -x -d 'device index'
complete -c fdtune -n '__fdtune_in bench' -l probe -d 'a quick timing'
complete -c fdtune -n '__fdtune_in devices' -l no-bandwidth -d 'skip the copy bandwidth'
complete -c fdtune -n '__fdtune_in devices' -l db -r -F -d 'store the host links in'
complete -c fdtune -n '__fdtune_in bench' -l hybrid -x -a 'gpu-only cpu-only data-parallel task-parallel' -d 'hybrid step modes'
complete -c fdtune -n '__fdtune_in bench' -l reflection -d 'the energy check of the absorbing layer'
complete -c fdtune -n '__fdtune_in bench' -l gpu -x -a 'auto cpu' -d 'device A'
complete -c fdtune -n '__fdtune_in bench' -l absorb -x -d 'layer W[:S]'
complete -c fdtune -n '__fdtune_in bench' -l steps -x -d 'timed steps'
complete -c fdtune -n '__fdtune_in bench' -l warmup -x -d 'warm-up steps'
complete -c fdtune -n '__fdtune_in bench' -l fraction -x -d 'share of the planes on the CPU'
complete -c fdtune -n '__fdtune_in bench' -l config-gpu -x -d 'device A config'
complete -c fdtune -n '__fdtune_in bench' -l config-cpu -x -d 'device B config'
complete -c fdtune -n '__fdtune_in bench' -l share -x -a 'never unified always' -d 'one allocation'
complete -c fdtune -n '__fdtune_in bench' -l widths -x -d 'layer widths'
complete -c fdtune -n '__fdtune_in bench' -l db -r -F -d 'tuning database'
# db
complete -c fdtune -n '__fdtune_in db; and not __fish_seen_subcommand_from merge check' -a 'merge check'
complete -c fdtune -n '__fdtune_in db' -l best-only -d 'one result per model and problem'
complete -c fdtune -n '__fdtune_in db' -l drop-stale -d 'leave out results whose kernel changed'
complete -c fdtune -n '__fdtune_in db' -l meta -x -d 'KEY=VALUE'
complete -c fdtune -n '__fdtune_in db' -F

# hybrid plan
complete -c fdtune -n '__fdtune_in hybrid; and not __fish_seen_subcommand_from plan' -a plan -d 'predict and choose a hybrid step'
complete -c fdtune -n '__fdtune_in hybrid' -l gpu -x -a '(__fdtune_gpus)' -d GPU
complete -c fdtune -n '__fdtune_in hybrid' -l cpu -x -a auto -d 'the host CPU'
complete -c fdtune -n '__fdtune_in hybrid' -l op -x -a 'd2x d2y d2z lap wave dwave' -d operator
complete -c fdtune -n '__fdtune_in hybrid' -l R -x -d 'radius 1..8'
complete -c fdtune -n '__fdtune_in hybrid' -l precision -x -a 'f32 f64' -d precision
complete -c fdtune -n '__fdtune_in hybrid' -l grid -x -d 'N^3 or NXxNYxNZ'
complete -c fdtune -n '__fdtune_in hybrid' -l absorb -x -d 'W or W:S'
complete -c fdtune -n '__fdtune_in hybrid' -l db -r -F -d 'tuning database'
complete -c fdtune -n '__fdtune_in hybrid' -l predict -x -a 'MI300A GH200' -d 'a machine we cannot reach'
complete -c fdtune -n '__fdtune_in hybrid' -l json -d JSON
