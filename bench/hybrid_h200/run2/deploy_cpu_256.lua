-- bench/hybrid.sh: the best config of one device, its three deployments
ops { "dwave" }
param("eta", { "array" })
param("deploy", { "complete", "inout", "sides" })
constrain("these configs alone", function(c, dev, prob)
  local s = {}
  s["deploy=complete,eta=array"] = true
  s["deploy=inout,eta=array"] = true
  s["deploy=sides,eta=array"] = true
  local t = {}
  for _, k in ipairs({"deploy", "eta"}) do t[#t + 1] = k .. "=" .. tostring(c[k]) end
  return s[table.concat(t, ",")] == true
end)
strategy "exhaustive"
budget(3)
default { eta = "array", deploy = "complete" }
