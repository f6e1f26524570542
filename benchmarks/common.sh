# Shared by run.sh and run_ompt.sh (sourced after they parsed their arguments).
cd "$root"
command -v valgrind >/dev/null || die "valgrind is needed"
command -v python3 >/dev/null || die "python3 is needed"

option_value() {  # option_value BUILDDIR NAME: the value of a meson option, as JSON text
  python3 - "$1" "$2" <<'EOF'
import json, sys
for o in json.load(open(sys.argv[1] + "/meson-info/intro-buildoptions.json")):
    if o["name"] == sys.argv[2]:
        print(json.dumps(o["value"]))
EOF
}
