# numa-partition fish shell completion

function __fish_numa-partition_no_subcommand --description 'Test if there has been any subcommand yet'
    for i in (commandline -opc)
        if contains -- $i discover plan config render apply status remove allocator admit release allocations simulate version completion help h
            return 1
        end
    end
    return 0
end

complete -c numa-partition -n '__fish_numa-partition_no_subcommand' -f -l sysfs -r -d 'sysfs root to discover the machine from (a dump directory works too)'
complete -c numa-partition -n '__fish_numa-partition_no_subcommand' -f -l output -s o -r -d 'output format: table or json'
complete -c numa-partition -n '__fish_numa-partition_no_subcommand' -f -l config -s c -r -d 'config file (TOML)'
complete -c numa-partition -n '__fish_numa-partition_no_subcommand' -f -l log-level -r -d 'log level: debug, info, warn, error'
complete -c numa-partition -n '__fish_numa-partition_no_subcommand' -f -l help -s h -d 'show help'
complete -c numa-partition -n '__fish_numa-partition_no_subcommand' -f -l help -s h -d 'show help'
complete -c numa-partition -n '__fish_seen_subcommand_from discover' -f -l help -s h -d 'show help'
complete -r -c numa-partition -n '__fish_numa-partition_no_subcommand' -a 'discover' -d 'not implemented yet'
complete -c numa-partition -n '__fish_seen_subcommand_from plan' -f -l help -s h -d 'show help'
complete -r -c numa-partition -n '__fish_numa-partition_no_subcommand' -a 'plan' -d 'not implemented yet'
complete -c numa-partition -n '__fish_seen_subcommand_from config' -f -l help -s h -d 'show help'
complete -r -c numa-partition -n '__fish_numa-partition_no_subcommand' -a 'config' -d 'not implemented yet'
complete -c numa-partition -n '__fish_seen_subcommand_from render' -f -l help -s h -d 'show help'
complete -r -c numa-partition -n '__fish_numa-partition_no_subcommand' -a 'render' -d 'not implemented yet'
complete -c numa-partition -n '__fish_seen_subcommand_from apply' -f -l help -s h -d 'show help'
complete -r -c numa-partition -n '__fish_numa-partition_no_subcommand' -a 'apply' -d 'not implemented yet'
complete -c numa-partition -n '__fish_seen_subcommand_from status' -f -l help -s h -d 'show help'
complete -r -c numa-partition -n '__fish_numa-partition_no_subcommand' -a 'status' -d 'not implemented yet'
complete -c numa-partition -n '__fish_seen_subcommand_from remove' -f -l help -s h -d 'show help'
complete -r -c numa-partition -n '__fish_numa-partition_no_subcommand' -a 'remove' -d 'not implemented yet'
complete -c numa-partition -n '__fish_seen_subcommand_from allocator' -f -l help -s h -d 'show help'
complete -r -c numa-partition -n '__fish_numa-partition_no_subcommand' -a 'allocator' -d 'not implemented yet'
complete -c numa-partition -n '__fish_seen_subcommand_from admit' -f -l help -s h -d 'show help'
complete -r -c numa-partition -n '__fish_numa-partition_no_subcommand' -a 'admit' -d 'not implemented yet'
complete -c numa-partition -n '__fish_seen_subcommand_from release' -f -l help -s h -d 'show help'
complete -r -c numa-partition -n '__fish_numa-partition_no_subcommand' -a 'release' -d 'not implemented yet'
complete -c numa-partition -n '__fish_seen_subcommand_from allocations' -f -l help -s h -d 'show help'
complete -r -c numa-partition -n '__fish_numa-partition_no_subcommand' -a 'allocations' -d 'not implemented yet'
complete -c numa-partition -n '__fish_seen_subcommand_from simulate' -f -l help -s h -d 'show help'
complete -r -c numa-partition -n '__fish_numa-partition_no_subcommand' -a 'simulate' -d 'not implemented yet'
complete -c numa-partition -n '__fish_seen_subcommand_from version' -f -l help -s h -d 'show help'
complete -r -c numa-partition -n '__fish_numa-partition_no_subcommand' -a 'version' -d 'print version, commit and Go version'
complete -c numa-partition -n '__fish_seen_subcommand_from completion' -f -l help -s h -d 'show help'
complete -r -c numa-partition -n '__fish_numa-partition_no_subcommand' -a 'completion' -d 'print a shell completion script (bash, zsh or fish)'
complete -c numa-partition -n '__fish_seen_subcommand_from completion' -f -l help -s h -d 'show help'
complete -c numa-partition -n '__fish_seen_subcommand_from help h' -f -l help -s h -d 'show help'
complete -r -c numa-partition -n '__fish_seen_subcommand_from completion' -a 'help h' -d 'Shows a list of commands or help for one command'
