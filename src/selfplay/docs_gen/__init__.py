"""Pages of docs/ that are generated from the code, and checked by tests to be current.

- :mod:`.config_reference`: docs/config-reference.md, every config key from the schemas.
- :mod:`.paper_map`: docs/paper-map.md, every output of rule ``all`` for every shipped
  config, with the rule, script and library functions that make it.

``selfplay docs`` (:mod:`.cli`) writes both, or checks that the committed ones are current.
"""
