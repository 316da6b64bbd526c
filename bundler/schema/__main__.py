from bundler.schema import write_schema

print(write_schema())
