# Sourced by the test scripts:   . "$(dirname "$0")/lib.sh"
# T: a scratch folder, removed when the script exits.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# ok/bad WHAT: a check passed or failed, counted in pass and fail.
pass=0
fail=0
ok() { echo "  ok   $*"; pass=$((pass + 1)); }
bad() { echo "  FAIL $*"; fail=$((fail + 1)); }
# same DIR DIR: the same .npy outputs, bitwise (the first not empty)
same() {
    [ -n "$(ls "$1")" ] || return 1
    for x in "$1"/*.npy; do cmp -s "$x" "$2/$(basename "$x")" || return 1; done
}
# key NAME FILE: the number of "NAME" in a --stats JSON file.
key() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" "$2"; }
# in_lanes FUNC ITEM...: FUNC INDEX ITEM for every item (INDEX from 0), SI_TEST_JOBS
# (default 2: the machines have two cores) at a time, item i in lane i mod JOBS;
# returns when every lane is done. FUNC's output is its own to keep in order (a
# file per index); its exit status is ignored.
in_lanes() {
    _il_fn=$1
    shift
    _il_jobs=${SI_TEST_JOBS:-2}
    _il_lane=0
    while [ "$_il_lane" -lt "$_il_jobs" ]; do
        (
            _il_i=0
            for _il_it in "$@"; do
                if [ $((_il_i % _il_jobs)) -eq "$_il_lane" ]; then "$_il_fn" "$_il_i" "$_il_it" || :; fi
                _il_i=$((_il_i + 1))
            done
        ) &
        _il_lane=$((_il_lane + 1))
    done
    wait
}
# ref_inputs REFDIR: the --input options that give a model the inputs TensorFlow.js's
# reference run had (one: --input FILE; several: --input NAME=FILE each)
ref_inputs() {
    if [ "$(ls "$1"/input_*.npy | wc -l)" -gt 1 ]; then
        node -e '
        const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(m.inputs.map(i => `--input ${i.name}=${process.argv[2]}/${i.file}`).join(" "))' \
            "$1/manifest.json" "$1"
    else
        for f in "$1"/input_*.npy; do printf ' --input %s' "$f"; done
    fi
}
# table_specs MODELDIR: the rows of tests/MODELS.md, one SPEC each (models with free
# spatial dims at two sizes)
table_specs() {
    for f in "$1"/*.json; do
        n=$(basename "$f" .json)
        case $n in
        movenet-multipose) echo "$n@input=1,256,256,3 $n@input=1,192,320,3" ;;
        faceboxes) echo "$n@image_tensor=1,240,320,3 $n@image_tensor=1,320,320,3" ;;
        handtrack) echo "$n@input_tensor=1,320,320,3 $n@input_tensor=1,256,384,3" ;;
        rvm) echo "$n@src=1,256,256,3@r1i=@r2i=@r3i=@r4i=@downsample_ratio= $n@src=1,288,512,3@r1i=@r2i=@r3i=@r4i=@downsample_ratio=" ;;
        *) echo "$n" ;;
        esac
    done | tr '\n' ' '
}
